// Why a CUDA GPU is or is not usable, from the facts the plugin gathered: a pure function, so
// every diagnosis is tested without a GPU. docs/diagnoses.md lists the codes, which are stable:
// plugin-not-built, plugin-load-failed, no-nvidia-gpu, gpu-not-in-container, no-driver,
// stub-driver, driver-too-old,
// driver-init-failed, no-device, visible-devices-hide-all, visible-devices-invalid,
// nvml-missing, mig-enabled.
#pragma once

#include <string>
#include <vector>

#include "device/cuda/gpu_presence.hpp"
#include "nubo/device.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"

namespace nubo::detail {

// The diagnoses the facts call for, most fundamental first; empty when all is well. A problem
// that stops the probe (no driver, too old, ...) is reported alone: what follows from it would
// only repeat it. `host` says, when no driver loads, whether there is a GPU to drive.
std::vector<Diagnosis> diagnose_cuda(const nubo_cuda_facts& facts, const GpuPresence& host);

// The plugin is not there; `why` says where nubo looked, e.g. "NUBO_CUDA_PLUGIN names /x, which
// does not exist".
Diagnosis diagnose_plugin_not_built(const std::string& why);
// The plugin is there but cannot be used: the loader's message, or what is wrong with it.
Diagnosis diagnose_plugin_load_failed(const std::string& path, const std::string& why);

// The oldest driver branch that runs CUDA `cuda_major` (12 -> 525, 13 -> 580); 0 if unknown.
int minimum_driver_branch(int cuda_major);
// "CUDA_ERROR_NO_DEVICE" for 100, "CUDA error 12345" for a code nubo does not know.
std::string cuda_error_name(int result);

}  // namespace nubo::detail
