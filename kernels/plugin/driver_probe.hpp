// What the CUDA driver (libcuda.so.1, loaded with dlopen) says: its version, cuInit's result,
// and the devices it enumerates with their properties and peer access.
#pragma once

#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::cuda_plugin {

// Needs facts.runtime_version (to skip a driver too old for the runtime). Never throws.
void probe_driver(nubo_cuda_facts& facts) noexcept;

}  // namespace nubo::cuda_plugin
