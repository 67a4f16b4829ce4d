// The host CPU: model, cores, sockets, NUMA nodes and memory from /proc and /sys, and the BLAS
// nubo computes with on the CPU.
#pragma once

#include "nubo/device.hpp"

namespace nubo::detail {

HostCpu read_host_cpu();

}  // namespace nubo::detail
