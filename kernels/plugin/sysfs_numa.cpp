#include "sysfs_numa.hpp"

#include <cstdio>

namespace nubo::cuda_plugin {

int sysfs_numa_node(int domain, int bus, int device) noexcept {
  if (domain < 0 || bus < 0 || device < 0) return -1;
  char path[128];
  std::snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.0/numa_node",
                static_cast<unsigned>(domain), static_cast<unsigned>(bus) & 0xffu,
                static_cast<unsigned>(device) & 0x1fu);
  std::FILE* file = std::fopen(path, "r");
  if (!file) return -1;
  int node = -1;
  if (std::fscanf(file, "%d", &node) != 1 || node < -1) node = -1;
  std::fclose(file);
  return node;
}

}  // namespace nubo::cuda_plugin
