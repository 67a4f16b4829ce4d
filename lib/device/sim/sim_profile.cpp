#include "device/sim/sim_profile.hpp"

#include <map>
#include <mutex>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, SimProfile> profiles;  // by UUID
};

Registry& registry() {
  static Registry r;
  return r;
}

void parse_pcie(std::string_view value, const std::string& what, SimProfile& p) {
  const auto x = value.find_first_of("xX");
  if (x == std::string_view::npos)
    throw Error(Errc::invalid_argument,
                what + ": pcie='" + std::string(value) + "': expected GENxWIDTH, e.g. 3x8");
  p.pcie_gen =
      static_cast<int>(text::parse_int(value.substr(0, x), what + ": PCIe generation", 1, 7));
  p.pcie_width =
      static_cast<int>(text::parse_int(value.substr(x + 1), what + ": PCIe width", 1, 32));
}

}  // namespace

SimProfile parse_sim_profile(std::string_view modifiers, const std::string& what) {
  SimProfile p;
  if (modifiers.empty()) return p;
  p.text = std::string(modifiers);
  for (auto part : text::split(modifiers.substr(1), ':')) {
    const auto item = text::trim(part);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw Error(Errc::invalid_argument,
                  what + ": modifier '" + std::string(item) +
                      "': expected KEY=VALUE with KEY gemm, membw, nvlink or pcie");
    const auto key = text::trim(item.substr(0, eq));
    const auto value = text::trim(item.substr(eq + 1));
    const std::string where = what + ": " + std::string(key);
    if (key == "gemm")
      p.gemm = text::parse_double(value, where, 0.001, 1);
    else if (key == "membw")
      p.membw = text::parse_double(value, where, 0.001, 1);
    else if (key == "nvlink")
      p.nvlink = text::parse_double(value, where, 0.001, 1);
    else if (key == "pcie")
      parse_pcie(value, what, p);
    else
      throw Error(Errc::invalid_argument, what + ": unknown modifier '" + std::string(key) +
                                              "'; known: gemm, membw, nvlink, pcie");
  }
  return p;
}

void register_sim_profile(const std::string& uuid, const SimProfile& profile) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.profiles[uuid] = profile;
}

SimProfile sim_profile(const Device& device) {
  if (device.backend != Backend::sim) return {};
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  const auto it = r.profiles.find(device.uuid);
  return it == r.profiles.end() ? SimProfile{} : it->second;
}

}  // namespace nubo::detail
