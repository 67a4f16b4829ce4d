#include "device/health/health_facts.hpp"

#include <dlfcn.h>

#include "device/cuda/cuda_backend_plugin.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {

HealthFacts read_health_facts(int wait_ms) {
  HealthFacts out;
  CudaBackendPlugin plugin;
  try {
    plugin = load_cuda_backend_plugin();
  } catch (const Error& e) {
    out.source = e.what();
    return out;
  }
  const auto entry =
      reinterpret_cast<nubo_cuda_plugin_health_fn>(dlsym(plugin.library, NUBO_CUDA_HEALTH_ENTRY));
  if (!entry) {
    out.source = plugin.path + " predates the health report (no " NUBO_CUDA_HEALTH_ENTRY
                               "); rebuild or reinstall it";
    return out;
  }
  auto facts = std::make_unique<nubo_cuda_health>();  // zeroed: an older plugin writes less
  facts->struct_size = sizeof(nubo_cuda_health);
  facts->abi_version = NUBO_CUDA_HEALTH_ABI_VERSION;
  facts->wait_ms = wait_ms;
  const int rc = entry(facts.get());
  if (rc != NUBO_CUDA_PLUGIN_OK || facts->struct_size > sizeof(nubo_cuda_health)) {
    out.source = plugin.path + ": its health probe failed (code " + std::to_string(rc) + ")";
    return out;
  }
  if (!facts->nvml_loaded || facts->nvml_init_result != 0) {
    out.source = std::string("NVML: ") + facts->nvml_error;
    return out;
  }
  out.source = "nvml";
  out.facts = std::move(facts);
  return out;
}

}  // namespace nubo::detail
