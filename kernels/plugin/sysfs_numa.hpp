// The NUMA node of a PCI device as the kernel reports it, for when NVML cannot say.
#pragma once

namespace nubo::cuda_plugin {

// /sys/bus/pci/devices/<domain:bus:device.0>/numa_node; -1 when unknown or unreadable.
int sysfs_numa_node(int domain, int bus, int device) noexcept;

}  // namespace nubo::cuda_plugin
