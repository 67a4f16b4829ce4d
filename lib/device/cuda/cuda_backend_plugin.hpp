// Loads the backend table of the CUDA plugin (nubo_cuda_backend_v2 in libnubo_cuda.so). The
// plugin is looked for as discovery looks for it (lib/device/cuda/cuda_probe.cpp):
// NUBO_CUDA_PLUGIN, then beside libnubo, then the loader's path.
#pragma once

#include <string>

#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::detail {

struct CudaBackendPlugin {
  std::string path;  // the file loaded, for messages
  const nubo_cuda_backend_api* api = nullptr;
  void* library = nullptr;  // the dlopen handle, for the plugin's other tables (never closed)
};

// Throws Errc::unavailable naming the file and the reason when there is no usable plugin (not
// built, fails to load, an older plugin without the backend, another table version). NUBO_CUDA=0
// counts as "no plugin". The plugin stays loaded for the life of the process.
CudaBackendPlugin load_cuda_backend_plugin();

}  // namespace nubo::detail
