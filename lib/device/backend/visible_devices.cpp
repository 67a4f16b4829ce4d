#include "device/backend/visible_devices.hpp"

#include <charconv>

#include "common/text.hpp"

namespace nubo::detail {
namespace {

const char* kAdvice =
    "Set CUDA_VISIBLE_DEVICES to indices or UUIDs that `nubo-smi` (or `nvidia-smi -L`) lists, "
    "separated by commas, e.g. CUDA_VISIBLE_DEVICES=0,1; unset it to see every device.";

bool parse_index(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// The position of the device an entry names, -1 if none, -2 if a UUID prefix is ambiguous.
int resolve(std::string_view entry, const std::vector<Device>& candidates) {
  int index = 0;
  if (parse_index(entry, index)) {
    if (index < 0) return -5;  // "-1" is the customary way to hide every device on purpose
    return index < static_cast<int>(candidates.size()) ? index : -1;
  }
  // A UUID, or a unique prefix of one, with or without the "GPU-" prefix (as CUDA accepts).
  std::string want = text::lower(entry);
  if (want.rfind("gpu-", 0) != 0) want = "gpu-" + want;
  int found = -1;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    if (text::lower(candidates[i].uuid).rfind(want, 0) == 0) {
      if (found >= 0) return -2;
      found = i;
    }
  }
  return found;
}

}  // namespace

VisibleDevices apply_visible_devices(const std::string& spec,
                                     const std::vector<Device>& candidates) {
  VisibleDevices out;
  std::vector<bool> taken(candidates.size(), false);
  auto entries = text::split(spec, ',');
  for (std::size_t k = 0; k < entries.size(); ++k) {
    auto entry = text::trim(entries[k]);
    if (entry.empty() && entries.size() == 1) break;  // CUDA_VISIBLE_DEVICES="" hides all
    int pos = entry.rfind("MIG-", 0) == 0 ? -3 : resolve(entry, candidates);
    if (pos >= 0 && taken[pos]) pos = -4;
    if (pos == -5) break;
    if (pos < 0) {
      // The CUDA runtime stops at the first entry that names no device: so does nubo.
      std::string why = pos == -2   ? "is a UUID prefix that matches several devices"
                        : pos == -3 ? "names a MIG instance, which nubo cannot address yet"
                        : pos == -4 ? "repeats a device listed before it"
                                    : "names no device";
      std::string dropped;
      for (std::size_t r = k; r < entries.size(); ++r) {
        if (r > k) dropped += ',';
        dropped += text::trim(entries[r]);
      }
      out.diagnoses.push_back(
          {"visible-devices-invalid", Severity::error,
           "CUDA_VISIBLE_DEVICES='" + spec + "': entry '" + std::string(entry) + "' " + why +
               " (there are " + std::to_string(candidates.size()) +
               " devices); like CUDA, nubo ignores it and everything after it ('" + dropped + "')",
           kAdvice});
      break;
    }
    taken[pos] = true;
    out.kept.push_back(pos);
  }
  if (out.kept.empty() && !candidates.empty()) {
    out.diagnoses.push_back({"visible-devices-hide-all", Severity::warning,
                             "CUDA_VISIBLE_DEVICES='" + spec + "' hides all " +
                                 std::to_string(candidates.size()) + " devices",
                             kAdvice});
  }
  return out;
}

}  // namespace nubo::detail
