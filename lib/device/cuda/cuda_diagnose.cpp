#include "device/cuda/cuda_diagnose.hpp"

#include <algorithm>
#include <cstdint>

#include "device/backend/visible_devices.hpp"
#include "device/cuda/cuda_facts.hpp"

namespace nubo::detail {
namespace {

// CUresult values nubo reasons about (cuda.h; stable across releases).
constexpr int kNotInitialized = 3;
constexpr int kStubLibrary = 34;
constexpr int kInsufficientDriver = 35;
constexpr int kNoDevice = 100;
constexpr int kOperatingSystem = 304;
constexpr int kSystemDriverMismatch = 803;
constexpr int kCompatNotSupportedOnDevice = 804;
constexpr int kUnknown = 999;

std::string driver_label(const nubo_cuda_facts& f) {
  std::string s = "CUDA " + cuda_version_string(f.driver_version);
  if (auto release = fact_text(f.driver_release); !release.empty()) s += ", driver " + release;
  return s;
}

std::string runtime_label(const nubo_cuda_facts& f) {
  return "CUDA " + cuda_version_string(f.runtime_version);
}

// ---- no-driver ----------------------------------------------------------------------------

Diagnosis no_driver(const nubo_cuda_facts& f) {
  std::string why = fact_text(f.driver_error);
  std::string runtime = f.runtime_version > 0 ? runtime_label(f) : "CUDA";
  int branch = minimum_driver_branch(f.runtime_version / 1000);
  return {"no-driver", Severity::warning,
          "No NVIDIA driver: libcuda.so.1 cannot be loaded" +
              (why.empty() ? "" : " (" + why + ")") + ". nubo's CUDA plugin (" + runtime +
              " runtime) needs it to reach a GPU, so only "
              "the CPU is used.",
          "Install the NVIDIA driver" +
              (branch > 0 ? " (branch " + std::to_string(branch) + " or newer for " + runtime + ")"
                          : std::string()) +
              ": on Debian or Ubuntu `apt install nvidia-driver` (or `cuda-drivers` from NVIDIA's "
              "repository) and reboot, or start the machine from a cloud image with the NVIDIA "
              "drivers preinstalled. In a container, install the NVIDIA Container Toolkit on the "
              "host and run with `--gpus all` (docker) so that the host's driver is mounted in. "
              "If the driver is installed somewhere unusual, add the directory of libcuda.so.1 "
              "to LD_LIBRARY_PATH."};
}

// ---- no-nvidia-gpu, gpu-not-in-container ----------------------------------------------------

Diagnosis no_nvidia_gpu(const GpuPresence& host) {
  const std::string where = host.in_container ? "this container sees" : "this machine has";
  return {"no-nvidia-gpu", Severity::info,
          "No NVIDIA GPU: " + where +
              " no NVIDIA PCI device (vendor 10de) and no /dev/nvidia* node, so only the CPU "
              "is used.",
          std::string("Nothing to do if the CPU is meant. For GPU work, start an instance type "
                      "with NVIDIA GPUs (`nubo-cost plan` compares them); in a virtual machine, "
                      "check that the GPU is attached to it.") +
              (host.in_container ? " If the host has GPUs, start this container with them "
                                   "passed in (`docker run --gpus all`)."
                                 : "")};
}

Diagnosis gpu_not_in_container(const GpuPresence& host) {
  std::string list;
  for (std::size_t i = 0; i < host.nvidia_pci.size() && i < 4; ++i)
    list += (i ? ", " : "") + host.nvidia_pci[i];
  if (host.nvidia_pci.size() > 4) list += ", ...";
  return {"gpu-not-in-container", Severity::error,
          "This container cannot reach the machine's " + std::to_string(host.nvidia_pci.size()) +
              " NVIDIA GPU" + (host.nvidia_pci.size() == 1 ? "" : "s") + " (PCI " + list +
              "): /dev/nvidia* is missing inside it and no driver library was mounted, so only "
              "the CPU is used.",
          "Start the container with the GPUs passed in: `docker run --gpus all` (with the NVIDIA "
          "Container Toolkit on the host), `podman run --device nvidia.com/gpu=all` (CDI), or a "
          "`nvidia.com/gpu` resource limit in Kubernetes. Installing a driver inside the "
          "container does not help: the host's driver is mounted in."};
}

// ---- stub-driver --------------------------------------------------------------------------

bool is_stub(const nubo_cuda_facts& f) {
  return f.init_result == kStubLibrary || f.driver_version_result == kStubLibrary ||
         fact_text(f.driver_path).find("/stubs/") != std::string::npos;
}

Diagnosis stub_driver(const nubo_cuda_facts& f) {
  std::string path = fact_text(f.driver_path);
  return {"stub-driver", Severity::error,
          "The libcuda.so.1 that was loaded" + (path.empty() ? "" : " (" + path + ")") +
              " is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY), meant only for "
              "linking; it cannot run anything, and it hides the real driver if one is installed.",
          "Remove the toolkit's stubs directory (e.g. /usr/local/cuda/lib64/stubs) from "
          "LD_LIBRARY_PATH, and any libcuda.so.1 link to the stub from the loader path; then "
          "check that the real driver is installed (`nvidia-smi`)."};
}

// ---- driver-too-old -----------------------------------------------------------------------

bool is_too_old(const nubo_cuda_facts& f) {
  return f.driver_version_result == 0 && f.driver_version > 0 && f.runtime_version > 0 &&
         f.driver_version / 1000 < f.runtime_version / 1000;
}

Diagnosis driver_too_old(const nubo_cuda_facts& f) {
  const int major = f.runtime_version / 1000, minor = f.runtime_version % 1000 / 10;
  const int branch = minimum_driver_branch(major);
  const std::string need =
      branch > 0 ? "branch " + std::to_string(branch) + " or newer" : "a newer release";
  const std::string driver = cuda_version_string(f.driver_version);
  const std::string runtime = cuda_version_string(f.runtime_version);
  const std::string compat = "cuda-compat-" + std::to_string(major) + "-" + std::to_string(minor);
  return {
      "driver-too-old", Severity::error,
      "The NVIDIA driver is too old: it supports CUDA up to " + driver +
          (fact_text(f.driver_release).empty() ? ""
                                               : " (driver " + fact_text(f.driver_release) + ")") +
          ", but nubo's CUDA plugin uses the CUDA " + runtime +
          " runtime, which needs an NVIDIA driver of " + need +
          ". (The CUDA runtime alone calls this, like a missing driver, \"CUDA driver "
          "version is insufficient for CUDA runtime version\".)",
      "Upgrade the NVIDIA driver to " + need +
          " (e.g. `apt install cuda-drivers` from "
          "NVIDIA's repository, then reboot). Where the driver cannot be changed, install the "
          "forward-compatibility package " +
          compat + " and put /usr/local/cuda-" + runtime +
          "/compat on LD_LIBRARY_PATH (data-center GPUs only). In a container the host's "
          "driver is the one that counts (an image cannot bring its own): upgrade the host "
          "driver, or use an image, and a nubo, built for CUDA " +
          driver + " or older."};
}

// ---- driver-init-failed -------------------------------------------------------------------

std::string init_advice(int result) {
  switch (result) {
    case kInsufficientDriver:
      return "The driver refuses this runtime: upgrade the NVIDIA driver, or check that a "
             "forward-compatibility libcuda (cuda-compat) on LD_LIBRARY_PATH matches the "
             "installed kernel driver.";
    case kSystemDriverMismatch:
      return "libcuda.so.1 and the NVIDIA kernel module are different versions, usually after "
             "a driver upgrade without a reboot: reboot, or reinstall the driver so that both "
             "match (compare `cat /proc/driver/nvidia/version` with the libcuda.so.1 version).";
    case kCompatNotSupportedOnDevice:
      return "A forward-compatibility libcuda (cuda-compat) is in use, and it works on "
             "data-center GPUs only: remove its directory from LD_LIBRARY_PATH.";
    case kOperatingSystem:
    case kUnknown:
      return "Often the NVIDIA kernel module is not loaded or /dev/nvidia* cannot be opened: "
             "check `nvidia-smi`, `lsmod | grep nvidia` and the permissions of /dev/nvidia*; in "
             "a container, run it with the NVIDIA Container Toolkit (`--gpus all`).";
    case NUBO_CUDA_MISSING_SYMBOL:
      return "The libcuda.so.1 on the loader path is not a CUDA driver: remove it from "
             "LD_LIBRARY_PATH and check the driver installation (`nvidia-smi`).";
    default:
      return "Check the driver with `nvidia-smi`; the CUDA driver API documentation explains "
             "this error. Reinstalling the driver and rebooting fixes most such failures.";
  }
}

// `what` names the call and how it failed, e.g. "cuInit failed with CUDA_ERROR_UNKNOWN (999)".
Diagnosis init_failed(const nubo_cuda_facts& f, const std::string& what, int result) {
  return {"driver-init-failed", Severity::error,
          "The NVIDIA driver (" + driver_label(f) +
              ") is installed but cannot be initialised: " + what + ".",
          init_advice(result)};
}

std::string call_failed(const std::string& call, int result, const std::string& reported_name) {
  if (result == NUBO_CUDA_MISSING_SYMBOL) return "libcuda.so.1 does not export " + call;
  const std::string name = reported_name.empty() ? cuda_error_name(result) : reported_name;
  return call + " failed with " + name + " (" + std::to_string(result) + ")";
}

// ---- visible devices, no-device -----------------------------------------------------------

bool nvml_usable(const nubo_cuda_facts& f) {
  return f.nvml_loaded && f.nvml_init_result == 0 && f.nvml_device_count >= 0 &&
         fact_text(f.nvml_error).empty();
}

// CUDA_VISIBLE_DEVICES checked against every GPU NVML lists (which the variable does not
// filter), in the order CUDA numbers them: PCI bus order unless FASTEST_FIRST is asked for (a
// speed order nubo cannot reproduce; UUIDs and counts are still checked right).
std::vector<Diagnosis> visible_devices(const nubo_cuda_facts& f) {
  if (!f.visible_devices_set || f.visible_devices_truncated || !nvml_usable(f)) return {};
  std::vector<Device> all;
  for (int k = 0; k < listed_nvml_devices(f); ++k) {
    const auto& nv = f.nvml_devices[k];
    Device d;
    d.backend = Backend::cuda;
    d.index = d.ordinal = k;
    d.name = fact_text(nv.name);
    d.uuid = fact_text(nv.uuid);
    d.pci_bus_id = fact_text(nv.pci_bus_id);
    all.push_back(std::move(d));
  }
  if (fact_text(f.device_order) != "FASTEST_FIRST")
    std::stable_sort(all.begin(), all.end(),
                     [](const Device& a, const Device& b) { return a.pci_bus_id < b.pci_bus_id; });
  return apply_visible_devices(fact_text(f.visible_devices), all).diagnoses;
}

Diagnosis no_device(const nubo_cuda_facts& f) {
  std::string msg =
      "The NVIDIA driver (" + driver_label(f) + ") is loaded but reports no CUDA device";
  if (f.init_result == kNoDevice) msg += " (cuInit: CUDA_ERROR_NO_DEVICE)";
  const bool nvml = nvml_usable(f);
  if (f.visible_devices_set) {
    msg += "; CUDA_VISIBLE_DEVICES='" + fact_text(f.visible_devices) + "' may hide them";
    if (!nvml) msg += " (without NVML nubo cannot check which devices exist)";
  } else if (nvml && f.nvml_device_count > 0) {
    msg += ", although NVML lists " + std::to_string(f.nvml_device_count) + " GPU(s)";
  }
  return {"no-device", Severity::warning, msg + ".",
          "Check that the machine has an NVIDIA GPU (`lspci | grep -i nvidia`) and that "
          "`nvidia-smi` lists it; in a container, run with `--gpus all` (NVIDIA Container "
          "Toolkit); unset CUDA_VISIBLE_DEVICES to see every device; a GPU in MIG mode is "
          "reachable only through its MIG instances."};
}

// ---- nvml-missing, mig-enabled ------------------------------------------------------------

Diagnosis nvml_missing(const nubo_cuda_facts& f, int devices) {
  std::string why = fact_text(f.nvml_error);
  if (why.empty()) why = "it lists no devices";
  return {"nvml-missing", devices > 1 ? Severity::warning : Severity::info,
          "NVML (libnvidia-ml.so.1) is not usable (" + why +
              "), so the topology is partial: "
              "the kind of link between GPUs is unknown (peer access is still known), and free "
              "memory, MIG mode and the driver release are not reported.",
          "NVML comes with the NVIDIA driver (Debian: libnvidia-ml1; Ubuntu: "
          "libnvidia-compute-<branch>): make sure libnvidia-ml.so.1 is on the loader path. In a "
          "container, give it the `utility` capability "
          "(NVIDIA_DRIVER_CAPABILITIES=compute,utility)."};
}

Diagnosis mig_enabled(const nubo_cuda_facts& f, const std::vector<int>& gpus) {
  // nvidia-smi -i takes a PCI bus id too, which, unlike an index, means the same to both tools.
  const std::string first_bus_id = fact_text(f.devices[gpus.front()].pci_bus_id);
  std::string list;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    const auto& d = f.devices[gpus[k]];
    list += (k ? ", " : "") + std::to_string(gpus[k]) + " (" + fact_text(d.name) + ", " +
            fact_text(d.pci_bus_id) + ")";
  }
  return {"mig-enabled", Severity::warning,
          "MIG mode is on for GPU " + list +
              ". CUDA reaches a GPU in MIG mode only through "
              "its MIG instances, each addressed by its MIG UUID; nubo treats the whole GPU as "
              "one device.",
          "To use the whole GPU, turn MIG off (`sudo nvidia-smi -i " + first_bus_id +
              " -mig 0`, then reset the GPU or reboot). To use an instance, list them with "
              "`nvidia-smi -L` and set "
              "CUDA_VISIBLE_DEVICES=MIG-<uuid> for the program (nubo does not address MIG "
              "instances yet)."};
}

}  // namespace

int minimum_driver_branch(int cuda_major) {
  switch (cuda_major) {
    case 10:
      return 410;
    case 11:
      return 450;
    case 12:
      return 525;
    case 13:
      return 580;
    default:
      return 0;
  }
}

std::string cuda_error_name(int result) {
  switch (result) {
    case 0:
      return "CUDA_SUCCESS";
    case 1:
      return "CUDA_ERROR_INVALID_VALUE";
    case 2:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case kNotInitialized:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case 4:
      return "CUDA_ERROR_DEINITIALIZED";
    case kStubLibrary:
      return "CUDA_ERROR_STUB_LIBRARY";
    case kInsufficientDriver:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 46:
      return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case kNoDevice:
      return "CUDA_ERROR_NO_DEVICE";
    case 101:
      return "CUDA_ERROR_INVALID_DEVICE";
    case 102:
      return "CUDA_ERROR_DEVICE_NOT_LICENSED";
    case kOperatingSystem:
      return "CUDA_ERROR_OPERATING_SYSTEM";
    case kSystemDriverMismatch:
      return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case kCompatNotSupportedOnDevice:
      return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case kUnknown:
      return "CUDA_ERROR_UNKNOWN";
    default:
      return "CUDA error " + std::to_string(result);
  }
}

Diagnosis diagnose_plugin_not_built(const std::string& why) {
  return {"plugin-not-built", Severity::warning,
          "nubo's CUDA plugin (libnubo_cuda.so) was not found: " + why +
              ". Without it no CUDA device is probed: only the CPU is used.",
          "Build nubo on a machine with the CUDA toolkit (cmake finds it in /usr/local/cuda, or "
          "pass -DCUDAToolkit_ROOT=...; -DNUBO_WITH_CUDA=ON makes its absence an error) and "
          "install libnubo_cuda.so beside libnubo, or point NUBO_CUDA_PLUGIN at it."};
}

Diagnosis diagnose_plugin_load_failed(const std::string& path, const std::string& why) {
  return {"plugin-load-failed", Severity::error,
          "nubo's CUDA plugin " + path + " cannot be used: " + why,
          "Rebuild and reinstall nubo so that libnubo_cuda.so matches this libnubo, and check "
          "NUBO_CUDA_PLUGIN if it is set. If the loader names a missing library, `ldd " +
              path + "` shows which."};
}

std::vector<Diagnosis> diagnose_cuda(const nubo_cuda_facts& f, const GpuPresence& host) {
  if (!f.driver_loaded) {
    if (!host.device_nodes && host.nvidia_pci.empty()) return {no_nvidia_gpu(host)};
    if (!host.device_nodes && host.in_container) return {gpu_not_in_container(host)};
    return {no_driver(f)};
  }
  if (is_stub(f)) return {stub_driver(f)};
  if (is_too_old(f)) return {driver_too_old(f)};
  // Only a driver too old for the runtime is left uninitialised on purpose (handled above).
  if (!f.init_called) return {init_failed(f, "cuInit was not called", kNotInitialized)};
  if (f.init_result != 0 && f.init_result != kNoDevice)
    return {init_failed(f, call_failed("cuInit", f.init_result, fact_text(f.init_error_name)),
                        f.init_result)};
  if (f.init_result == 0 && f.device_count_result != 0)
    return {init_failed(f, call_failed("cuDeviceGetCount", f.device_count_result, ""),
                        f.device_count_result)};

  std::vector<Diagnosis> out = visible_devices(f);
  const int devices = f.init_result == 0 ? listed_cuda_devices(f) : 0;
  if (devices == 0) {
    // The visible-devices diagnosis already says why nothing is listed.
    if (out.empty()) out.push_back(no_device(f));
    return out;
  }
  if (!nvml_usable(f) || f.nvml_device_count == 0) out.push_back(nvml_missing(f, devices));

  std::vector<int> mig;
  for (int i = 0; i < devices; ++i)
    if (const auto* nv = nvml_entry(f, i); nv && nv->mig_mode == 1) mig.push_back(i);
  if (!mig.empty()) out.push_back(mig_enabled(f, mig));
  return out;
}

}  // namespace nubo::detail
