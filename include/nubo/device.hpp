// Device discovery: the GPUs (real or simulated) and the host CPU, their properties and peak
// rates, the driver, the GPU-to-GPU topology, and diagnoses that say why a GPU is not usable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/export.hpp"

namespace nubo {

enum class Backend { host, sim, cuda };
NUBO_API std::string_view backend_name(Backend b) noexcept;

// Dense peak rates in TFLOP/s; 0 where unknown.
struct PeakRates {
  double fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0;
};

struct Device {
  Backend backend = Backend::host;
  int index = 0;           // nubo's index: position in DeviceReport::devices
  int ordinal = 0;         // the backend's own index (the CUDA device ordinal for cuda)
  std::string name;        // as the device reports it, e.g. "NVIDIA A100-SXM4-80GB"
  std::string model;       // the GPU model table's key, e.g. "A100-SXM4-80GB"; empty if unknown
  std::string uuid;        // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string pci_bus_id;  // "00000000:07:00.0"
  int cc_major = 0, cc_minor = 0;  // compute capability
  int multiprocessors = 0;
  int clock_mhz = 0;                // boost clock
  std::uint64_t memory_total = 0;   // bytes
  std::uint64_t memory_free = 0;    // bytes
  double memory_bandwidth_gbs = 0;  // GB/s
  PeakRates peak;
  std::string peak_source;  // "device" (from its own figures) or "catalog" (the model table)
  int numa_node = -1;       // -1: unknown
  bool mig_enabled = false;
};

struct HostCpu {
  std::string model;  // /proc/cpuinfo "model name"
  int logical_cores = 0;
  int physical_cores = 0;
  int sockets = 0;
  int numa_nodes = 0;
  std::uint64_t memory_total = 0;      // bytes
  std::uint64_t memory_available = 0;  // bytes
  std::string blas;                    // the BLAS in use, e.g. "OpenBLAS 0.3.21 ... Haswell"
};

struct DriverInfo {
  bool loaded = false;         // libcuda.so.1 could be loaded
  int driver_version = 0;      // highest CUDA version the driver supports, e.g. 12040
  int runtime_version = 0;     // CUDA runtime nubo's plugin was built with, e.g. 13000
  std::string driver_release;  // the kernel driver's own version, e.g. "580.65.06"; may be empty
};

// How two GPUs are connected, named as `nvidia-smi topo -m` names it.
enum class LinkKind { self, nvlink, pix, pxb, phb, node, sys, unknown };

struct Link {
  LinkKind kind = LinkKind::unknown;
  int nvlinks = 0;                    // number of NVLink links when kind == nvlink
  bool peer_access = false;           // direct peer-to-peer access works
  NUBO_API std::string name() const;  // "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS", "?"
};

// A network device, as `nvidia-smi topo -m` lists NICs.
struct Nic {
  std::string name;        // "mlx5_0", "efa_0" or the interface ("eth0")
  std::string kind;        // "infiniband", "efa" or "ethernet"
  std::string interface;   // the network interface it backs, "" when none ("ib0", "eth0")
  std::string pci_bus_id;  // "0000:0c:00.0", as sysfs writes it
  int numa_node = -1;
  double rate_gbps = 0;  // link rate in Gb/s; 0 unknown (or the link is down)
};

enum class Severity { info, warning, error };
NUBO_API std::string_view severity_name(Severity s) noexcept;

// A finding about the machine, with a stable code (docs/devices.md lists them all).
struct Diagnosis {
  std::string code;  // e.g. "no-driver", "driver-too-old"
  Severity severity = Severity::info;
  std::string message;  // what is wrong
  std::string advice;   // what to do about it
};

// A GPU to leave out of a selection, and why (e.g. the preflight found it degraded).
struct LeftOut {
  int device = 0;
  std::string reason;
};

// What a group of GPUs must offer. count == 0 means "all that qualify".
struct SelectRequest {
  int count = 1;
  std::uint64_t min_memory = 0;  // bytes of total memory per device
  int min_cc_major = 0, min_cc_minor = 0;
  std::vector<LeftOut> exclude = {};  // left out whatever they offer (preflight.hpp fills it)
};

class NUBO_API DeviceReport {
 public:
  HostCpu host;
  DriverInfo driver;
  std::vector<Device> devices;           // GPUs (cuda or sim), in nubo's order
  std::vector<std::vector<Link>> links;  // links[i][j] between devices i and j
  std::vector<Diagnosis> diagnoses;
  std::vector<Nic> nics;                       // the machine's network devices
  std::vector<std::vector<LinkKind>> gpu_nic;  // gpu_nic[i][n]: GPU i to nics[n] (PIX ... SYS)
  std::vector<int> preferred_nic;              // per GPU, the index of the NIC it should use; -1

  // True when at least one GPU (real or simulated) is listed.
  bool has_gpu() const { return !devices.empty(); }
  const Link& link(int i, int j) const;  // throws invalid_argument for a bad index
  const Diagnosis* find_diagnosis(std::string_view code) const;  // nullptr when absent

  // The best-connected group of devices meeting the request, in index order. Throws
  // Errc::unavailable with the reason when no group qualifies.
  std::vector<Device> select(const SelectRequest& request) const;

  // The host CPU as a device of the host backend.
  Device host_device() const;

  // The whole report as JSON (schema: docs/device-report.schema.json).
  std::string to_json() const;
};

struct DiscoverOptions {
  // Simulated devices, as NUBO_SIM_DEVICES; when unset the variable is read.
  std::optional<std::string> sim_devices;
  // A topology file for the simulated devices, as NUBO_SIM_TOPOLOGY.
  std::optional<std::string> sim_topology_file;
  // Probe for CUDA devices through the plugin (NUBO_CUDA=0 turns it off).
  bool probe_cuda = true;
  // Path of libnubo_cuda.so, as NUBO_CUDA_PLUGIN; default: beside libnubo.
  std::optional<std::string> cuda_plugin_path;
};

// Finds the devices. Throws nubo::Error for bad configuration (a malformed NUBO_* variable or
// option); every problem with the machine itself is a diagnosis in the report instead.
NUBO_API DeviceReport discover(const DiscoverOptions& options = {});

// The devices a spec names, as nubo-train's --devices and the trainers' `devices` read it:
// "cpu" (one CPU worker), "cpu:N", "sim:N" (N simulated GPUs: NUBO_SIM_DEVICES' when set, else
// N A100s), "cuda:I[,J...]"; "" is every usable GPU, else one CPU worker. It never changes the
// environment. Error(invalid_argument) naming `what` and the spec when it is malformed or
// names devices that are not there.
NUBO_API std::vector<Device> devices_from_spec(const std::string& spec,
                                               const std::string& what = "devices");

}  // namespace nubo
