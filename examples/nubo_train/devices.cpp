#include "devices.hpp"

#include <cstdlib>
#include <vector>

#include "nubo/device.hpp"
#include "nubo/error.hpp"

namespace {

[[noreturn]] void bad(const std::string& spec, const std::string& why) {
  throw nubo::Error(nubo::Errc::invalid_argument, "--devices '" + spec + "': " + why +
                                                      " (use cpu, cpu:N, sim:N or cuda:I[,J...])");
}

int count_of(const std::string& spec, const std::string& text) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos)
    bad(spec, "'" + text + "' is not a count");
  int n = std::stoi(text);
  if (n < 1 || n > 256) bad(spec, "the count must lie in 1 .. 256");
  return n;
}

}  // namespace

nubo::Team make_team(const std::string& spec) {
  std::string kind = spec.substr(0, spec.find(':'));
  std::string rest = spec.find(':') == std::string::npos ? "" : spec.substr(spec.find(':') + 1);
  if (kind == "sim" && !std::getenv("NUBO_SIM_DEVICES")) {
    // Simulated GPUs come from discovery; ask for enough of a common model.
    std::string n = rest.empty() ? "1" : std::to_string(count_of(spec, rest));
    setenv("NUBO_SIM_DEVICES", (n + "xA100-SXM4-80GB").c_str(), 1);
  }
  auto report = nubo::discover();
  std::vector<nubo::Device> devices;
  if (spec.empty()) {
    if (report.has_gpu())
      devices = report.select({.count = 0});
    else
      devices.push_back(report.host_device());
  } else if (kind == "cpu") {
    devices.assign(static_cast<std::size_t>(rest.empty() ? 1 : count_of(spec, rest)),
                   report.host_device());
  } else if (kind == "sim") {
    int n = rest.empty() ? 1 : count_of(spec, rest);
    for (const auto& d : report.devices)
      if (d.backend == nubo::Backend::sim && static_cast<int>(devices.size()) < n)
        devices.push_back(d);
    if (static_cast<int>(devices.size()) < n)
      bad(spec, "only " + std::to_string(devices.size()) + " simulated GPUs (NUBO_SIM_DEVICES)");
  } else if (kind == "cuda") {
    if (rest.empty()) bad(spec, "name the GPUs");
    std::size_t at = 0;
    while (at <= rest.size()) {
      std::size_t comma = rest.find(',', at);
      std::string item =
          rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      int index = count_of(spec, item == "0" ? "1" : item) - (item == "0" ? 1 : 0);
      bool found = false;
      for (const auto& d : report.devices)
        if (d.backend == nubo::Backend::cuda && d.ordinal == index) {
          devices.push_back(d);
          found = true;
        }
      if (!found) bad(spec, "there is no CUDA device " + item);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  } else {
    bad(spec, "unknown kind '" + kind + "'");
  }
  return nubo::Team::from_env(devices);
}
