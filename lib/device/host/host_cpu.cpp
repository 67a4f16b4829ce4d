#include "device/host/host_cpu.hpp"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "common/text.hpp"

#include "device/host/openblas.hpp"

namespace nubo::detail {
namespace {

std::uint64_t meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    auto fields = text::split_whitespace(std::string_view(line).substr(key.size() + 1));
    if (fields.empty()) return 0;
    try {
      return static_cast<std::uint64_t>(text::parse_int(fields[0], key, 0, INT64_MAX / 1024)) *
             1024;
    } catch (...) {
      return 0;  // an odd /proc is not worth failing discovery over
    }
  }
  return 0;
}

}  // namespace

HostCpu read_host_cpu() {
  HostCpu cpu;
  cpu.logical_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  std::set<std::string> sockets;
  std::string physical_id;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto key = text::trim(std::string_view(line).substr(0, colon));
    auto value = std::string(text::trim(std::string_view(line).substr(colon + 1)));
    if (key == "model name" && cpu.model.empty()) cpu.model = value;
    if (key == "physical id") {
      physical_id = value;
      sockets.insert(value);
    }
    if (key == "core id") cores.insert({physical_id, value});
  }
  if (cpu.model.empty()) cpu.model = "unknown CPU";
  cpu.physical_cores = cores.empty() ? cpu.logical_cores : static_cast<int>(cores.size());
  cpu.sockets = sockets.empty() ? 1 : static_cast<int>(sockets.size());
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    auto name = entry.path().filename().string();
    if (name.rfind("node", 0) == 0 && name.size() > 4 &&
        name.find_first_not_of("0123456789", 4) == std::string::npos)
      ++cpu.numa_nodes;
  }
  if (cpu.numa_nodes == 0) cpu.numa_nodes = 1;
  cpu.memory_total = meminfo_bytes("MemTotal");
  cpu.memory_available = meminfo_bytes("MemAvailable");
  cpu.blas = openblas_description();
  return cpu;
}

}  // namespace nubo::detail
