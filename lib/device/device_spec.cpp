// The device spec of nubo-train's --devices and the C and Python trainers' `devices`, read once.
// It never touches the environment: simulated GPUs it needs are asked of discovery directly.
#include <algorithm>

#include "nubo/device.hpp"
#include "nubo/error.hpp"

namespace nubo {
namespace {

constexpr int kMostDevices = 256;

[[noreturn]] void bad(const std::string& spec, const std::string& what, const std::string& why) {
  throw Error(Errc::invalid_argument,
              what + " '" + spec + "': " + why + " (use cpu, cpu:N, sim:N or cuda:I[,J...])");
}

// A count (1 .. 256) or, with `zero_ok`, a CUDA ordinal (0 .. 255).
int number_of(const std::string& spec, const std::string& what, const std::string& text,
              bool zero_ok) {
  if (text.empty() || text.size() > 4 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    bad(spec, what, "'" + text + "' is not a number");
  const int n = std::stoi(text);
  if (n < (zero_ok ? 0 : 1) || n > (zero_ok ? kMostDevices - 1 : kMostDevices))
    bad(spec, what, zero_ok ? "a CUDA ordinal lies in 0 .. 255" : "the count must lie in 1 .. 256");
  return n;
}

}  // namespace

std::vector<Device> devices_from_spec(const std::string& spec, const std::string& what) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (colon != std::string::npos && rest.empty()) bad(spec, what, "nothing after ':'");
  DiscoverOptions options;
  if (spec.empty()) {
    const auto report = discover(options);
    if (report.has_gpu()) return report.select({.count = 0});
    return {report.host_device()};
  }
  if (kind == "cpu") {
    options.probe_cuda = false;
    options.sim_devices = "";
    const int n = rest.empty() ? 1 : number_of(spec, what, rest, false);
    return std::vector<Device>(static_cast<std::size_t>(n), discover(options).host_device());
  }
  if (kind == "sim") {
    const int n = rest.empty() ? 1 : number_of(spec, what, rest, false);
    options.probe_cuda = false;
    // NUBO_SIM_DEVICES when set; otherwise enough simulated A100s.
    std::vector<Device> out;
    for (const auto& d : discover(options).devices)
      if (d.backend == Backend::sim && static_cast<int>(out.size()) < n) out.push_back(d);
    if (out.empty()) {
      options.sim_devices = std::to_string(n) + "xA100-SXM4-80GB";
      for (const auto& d : discover(options).devices)
        if (d.backend == Backend::sim) out.push_back(d);
    }
    if (static_cast<int>(out.size()) < n)
      bad(spec, what, "only " + std::to_string(out.size()) + " simulated GPUs (NUBO_SIM_DEVICES)");
    return out;
  }
  if (kind == "cuda") {
    if (rest.empty()) bad(spec, what, "name the GPUs");
    const auto report = discover(options);
    std::vector<Device> out;
    for (std::size_t at = 0;;) {
      const std::size_t comma = rest.find(',', at);
      const std::string item =
          rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      const int index = number_of(spec, what, item, true);
      const auto found = std::find_if(
          report.devices.begin(), report.devices.end(),
          [&](const Device& d) { return d.backend == Backend::cuda && d.ordinal == index; });
      if (found == report.devices.end()) bad(spec, what, "there is no CUDA device " + item);
      out.push_back(*found);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    return out;
  }
  bad(spec, what, "unknown kind '" + kind + "'");
}

}  // namespace nubo
