// Finds libnubo_cuda.so, loads it with dlopen and turns its facts into devices, links and
// diagnoses. Where the plugin is looked for, in order: the path given (NUBO_CUDA_PLUGIN or the
// option); libnubo_cuda.so in the directory of libnubo itself (found with dladdr, so an
// installed or relocated nubo finds its own plugin); the loader's search path.
#include "device/cuda/cuda_probe.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <memory>

#include "common/log.hpp"
#include "device/cuda/cuda_diagnose.hpp"
#include "device/cuda/cuda_facts.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::detail {
namespace {

constexpr const char* kPluginName = "libnubo_cuda.so";

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string dl_error(const char* fallback) {
  const char* e = dlerror();
  return e ? e : fallback;
}

// The directory of the binary that holds this code: libnubo.so, or a program linking nubo
// statically. Empty when the loader cannot tell.
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&probe_cuda), &info) == 0 || !info.dli_fname) return {};
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

struct Loaded {
  std::string path;  // the plugin's file, for messages
  nubo_cuda_plugin_probe_fn probe = nullptr;
  std::optional<Diagnosis> problem;
};

// dlopen + dlsym. The handle is never closed: the plugin holds the CUDA runtime's state.
Loaded load(const std::string& path, const char* name_for_loader) {
  Loaded out;
  out.path = path;
  dlerror();
  void* handle = dlopen(name_for_loader, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    out.problem = diagnose_plugin_load_failed(path, dl_error("dlopen failed"));
    return out;
  }
  out.probe = reinterpret_cast<nubo_cuda_plugin_probe_fn>(dlsym(handle, NUBO_CUDA_PLUGIN_ENTRY));
  if (!out.probe)
    out.problem = diagnose_plugin_load_failed(
        path, std::string("it does not export ") + NUBO_CUDA_PLUGIN_ENTRY +
                  " (not a nubo CUDA plugin, or one from another nubo version)");
  return out;
}

Loaded locate_and_load(const std::optional<std::string>& plugin_path) {
  if (plugin_path) {
    if (!file_exists(*plugin_path)) {
      Loaded out;
      out.problem = diagnose_plugin_not_built(
          "NUBO_CUDA_PLUGIN (or the cuda_plugin_path option) "
          "names " +
          *plugin_path + ", which does not exist");
      return out;
    }
    // dlopen searches the loader's path for a name without '/'; the user meant this file.
    const std::string file =
        plugin_path->find('/') == std::string::npos ? "./" + *plugin_path : *plugin_path;
    return load(*plugin_path, file.c_str());
  }
  const std::string dir = own_directory();
  if (!dir.empty()) {
    const std::string beside = dir + "/" + kPluginName;
    if (file_exists(beside)) return load(beside, beside.c_str());
  }
  // Not beside libnubo: the loader's path (LD_LIBRARY_PATH, ld.so.conf) may still have it.
  dlerror();
  if (void* handle = dlopen(kPluginName, RTLD_NOW | RTLD_LOCAL)) {
    dlclose(handle);  // load() opens it again and keeps it; this only tested that it is there
    return load(kPluginName, kPluginName);
  }
  const std::string why = dl_error("dlopen failed");
  Loaded out;
  if (why.find("No such file") != std::string::npos)
    out.problem = diagnose_plugin_not_built(
        "it is neither beside libnubo" + (dir.empty() ? std::string() : " (in " + dir + ")") +
        " nor on the loader's path; this nubo was built without the CUDA toolkit, or the plugin "
        "was not installed with it");
  else
    out.problem = diagnose_plugin_load_failed(kPluginName, why);
  return out;
}

void log_device_order(const nubo_cuda_facts& f) {
  if (f.device_order_set && f.driver_was_initialised)
    log::warn(
        "CUDA was initialised in this process before nubo's first discovery, so "
        "CUDA_DEVICE_ORDER=PCI_BUS_ID came too late: device indices follow the driver's "
        "order. Set CUDA_DEVICE_ORDER=PCI_BUS_ID before the program starts.");
  else if (f.device_order_set)
    log::debug("CUDA_DEVICE_ORDER was unset; nubo set it to PCI_BUS_ID (nvidia-smi's order).");
}

}  // namespace

CudaProbeResult probe_cuda(const std::optional<std::string>& plugin_path) {
  CudaProbeResult result;
  Loaded plugin = locate_and_load(plugin_path);
  if (plugin.problem) {
    result.diagnoses.push_back(std::move(*plugin.problem));
    return result;
  }

  auto facts = std::make_unique<nubo_cuda_facts>();  // zeroed: an older plugin writes less
  facts->struct_size = sizeof(nubo_cuda_facts);
  facts->abi_version = NUBO_CUDA_PLUGIN_ABI_VERSION;
  const int rc = plugin.probe(facts.get());
  const std::string& path = plugin.path;
  if (rc == NUBO_CUDA_PLUGIN_ABI_MISMATCH) {
    result.diagnoses.push_back(diagnose_plugin_load_failed(
        path, "it speaks plugin ABI version " + std::to_string(facts->abi_version) +
                  ", this libnubo version " + std::to_string(NUBO_CUDA_PLUGIN_ABI_VERSION)));
    return result;
  }
  if (rc != NUBO_CUDA_PLUGIN_OK || facts->struct_size > sizeof(nubo_cuda_facts)) {
    result.diagnoses.push_back(
        diagnose_plugin_load_failed(path, "its probe failed (code " + std::to_string(rc) + ")"));
    return result;
  }

  log_device_order(*facts);
  result.driver = driver_from_facts(*facts);
  result.devices = devices_from_facts(*facts);
  result.links = links_from_facts(*facts);
  result.diagnoses = diagnose_cuda(*facts, gpu_presence());
  return result;
}

}  // namespace nubo::detail
