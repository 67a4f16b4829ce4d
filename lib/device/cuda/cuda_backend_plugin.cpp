#include "device/cuda/cuda_backend_plugin.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstddef>
#include <mutex>

#include "common/env.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

constexpr const char* kPluginName = "libnubo_cuda.so";

[[noreturn]] void unavailable(const std::string& what) {
  throw Error(Errc::unavailable, "CUDA backend: " + what);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The directory of the binary holding this code (libnubo.so, or a program linking it
// statically): where an installed nubo keeps its plugin.
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&load_cuda_backend_plugin), &info) == 0 ||
      !info.dli_fname)
    return {};
  const std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The file to dlopen: NUBO_CUDA_PLUGIN, beside libnubo, or the bare name for the loader.
std::string plugin_file() {
  if (const auto configured = env::cuda_plugin()) {
    if (!file_exists(*configured))
      unavailable("NUBO_CUDA_PLUGIN names " + *configured + ", which does not exist");
    return configured->find('/') == std::string::npos ? "./" + *configured : *configured;
  }
  const std::string dir = own_directory();
  if (!dir.empty() && file_exists(dir + "/" + kPluginName)) return dir + "/" + kPluginName;
  return kPluginName;
}

CudaBackendPlugin load(const std::string& file) {
  dlerror();
  // Never closed: the plugin holds the CUDA runtime's state for the rest of the process.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    unavailable("cannot load " + file + ": " + (why ? why : "dlopen failed") +
                ". This nubo was built without the CUDA toolkit, or the plugin or cuBLAS/NCCL "
                "are not installed; `nubo-smi` says more.");
  }
  const auto entry =
      reinterpret_cast<nubo_cuda_backend_v2_fn>(dlsym(handle, NUBO_CUDA_BACKEND_ENTRY));
  if (!entry)
    unavailable(file + " does not export " NUBO_CUDA_BACKEND_ENTRY
                       " (a plugin from an older nubo); rebuild or reinstall it");
  const nubo_cuda_backend_api* api = entry();
  if (!api || api->api_version != NUBO_CUDA_BACKEND_API_VERSION ||
      api->struct_size < offsetof(nubo_cuda_backend_api, nccl_version))
    unavailable(file + " has backend table version " + std::to_string(api ? api->api_version : 0) +
                ", this libnubo needs " + std::to_string(NUBO_CUDA_BACKEND_API_VERSION));
  return {file, api, handle};
}

}  // namespace

CudaBackendPlugin load_cuda_backend_plugin() {
  if (!env::cuda_enabled()) unavailable("NUBO_CUDA=0 turns CUDA off");
  const std::string file = plugin_file();
  // dlopen of a loaded file is cheap and returns the same handle; the lock only keeps two
  // first loads from racing on dlerror's thread-unsafe reporting in old libcs.
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  return load(file);
}

}  // namespace nubo::detail
