#include "device/host/host_cores.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

// An integer from a /sys file, or `fallback` when it is missing or odd.
int sys_int(const std::string& path, int fallback) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return fallback;
  try {
    return static_cast<int>(text::parse_int(text::trim(line), path, -1, 1 << 20));
  } catch (const Error&) {
    return fallback;
  }
}

// The NUMA node of each CPU, from the nodeN entries under the CPU's /sys folder.
int numa_node_of(int cpu) {
  std::error_code ec;
  const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.rfind("node", 0) == 0 &&
        name.find_first_not_of("0123456789", 4) == std::string::npos)
      return std::stoi(name.substr(4));
  }
  return 0;
}

}  // namespace

std::vector<HostCore> allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<HostCore> cores;
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    cores.push_back({});  // cannot say: the one CPU every process has
    return cores;
  }
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const std::string topo = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    HostCore c;
    c.cpu = cpu;
    c.node = numa_node_of(cpu);
    c.package = std::max(0, sys_int(topo + "physical_package_id", 0));
    c.core = sys_int(topo + "core_id", cpu);
    cores.push_back(c);
  }
  std::sort(cores.begin(), cores.end(), [](const HostCore& a, const HostCore& b) {
    return std::tie(a.node, a.package, a.core, a.cpu) < std::tie(b.node, b.package, b.core, b.cpu);
  });
  return cores;
}

int online_cpus() {
  return std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
}

void pin_calling_thread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<std::string> names;
  for (int c : cpus) {
    CPU_SET(c, &set);
    names.push_back(std::to_string(c));
  }
  if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0)
    throw Error(Errc::internal,
                "cannot pin a worker to CPUs " + text::join(names, ",") + ": " + std::strerror(rc));
}

}  // namespace nubo::detail
