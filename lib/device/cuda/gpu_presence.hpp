// Whether this machine has NVIDIA GPUs at all, and whether this process can reach them, read
// from the kernel's own view (sysfs and /dev) rather than from a driver: when no driver can be
// loaded, it tells "no NVIDIA GPU here" from "GPUs here, but no driver" from "GPUs on the host,
// but this container was started without them" (cuda_diagnose.hpp).
#pragma once

#include <string>
#include <vector>

namespace nubo::detail {

struct GpuPresence {
  std::vector<std::string> nvidia_pci;  // NVIDIA display and 3D controllers, by PCI address
  bool device_nodes = false;            // /dev/nvidiactl or /dev/nvidiaN exists
  bool in_container = false;            // Docker's, Podman's or a Kubernetes pod's markers
};

// Read under `root` ("/" for this machine; a fixture tree in tests): sys/bus/pci/devices/*
// (vendor 0x10de, class 0x03xxxx), dev/nvidia*, .dockerenv, run/.containerenv and the container
// managers' names in proc/1/cgroup. Whatever cannot be read counts as absent.
GpuPresence gpu_presence(const std::string& root = "/");

}  // namespace nubo::detail
