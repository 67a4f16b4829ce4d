// Every environment variable nubo reads, parsed in this one place (docs/env.md lists them).
// A bad value is a nubo::Error(invalid_argument) that names the variable and what it accepts.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace nubo::env {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

// The raw value of a variable, or nullopt when unset. Empty counts as set.
std::optional<std::string> get(const char* name);

// NUBO_LOG=error|warn|info|debug (default warn; empty is malformed, as for every variable that
// names one of a list).
LogLevel log_level();

// NUBO_SIM_DEVICES, e.g. "8xA100-SXM4-80GB" or "2xT4,1xV100-SXM2-16GB"; nullopt or empty: none.
std::optional<std::string> sim_devices();

// NUBO_SIM_TOPOLOGY: path of a topology file for the simulated devices (docs/devices.md).
std::optional<std::string> sim_topology();

// NUBO_CUDA_PLUGIN: path of libnubo_cuda.so to load instead of the one beside libnubo.
std::optional<std::string> cuda_plugin();

// NUBO_CUDA=0 skips the CUDA probe (1 or unset: probe).
bool cuda_enabled();

// CUDA's own variables, which nubo honours the way the CUDA runtime does.
std::optional<std::string> cuda_visible_devices();
enum class DeviceOrder { pci_bus_id, fastest_first };
// CUDA_DEVICE_ORDER=PCI_BUS_ID|FASTEST_FIRST; nubo's default is PCI_BUS_ID, like nvidia-smi.
DeviceOrder cuda_device_order();

// The job that nubo-run started (docs/parallel.md): NUBO_RANK and NUBO_WORLD_SIZE count
// processes, NUBO_LOCAL_RANK is the process's index on its host (default: NUBO_RANK),
// NUBO_LOCAL_WORLD_SIZE the processes on its host (default: unknown, 0), and NUBO_RENDEZVOUS is
// where they meet (file:///dir, tcp://host:port or redis://host:port/job; parsed and checked by
// lib/parallel, which names the variable in its errors). Other launchers' variables (torchrun,
// Slurm, Open MPI, SkyPilot) are read by lib/parallel/launch/launchers.cpp.
struct Job {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 0;
  std::string rendezvous;
};
// nullopt when none of the four is set. Throws when some are set but not NUBO_RANK,
// NUBO_WORLD_SIZE and NUBO_RENDEZVOUS all, or a number is malformed, or rank >= world size.
std::optional<Job> job();

// NUBO_TIMEOUT: seconds (e.g. 60 or 2.5, in (0, 86400]) a collective waits for its peers;
// nullopt when unset or empty.
std::optional<std::chrono::milliseconds> timeout();
// NUBO_CHECKPOINT_DELAY: seconds added to every checkpoint write (rehearses a slow store, and
// lets tests give the write time they need); 0 when unset.
double checkpoint_delay_s();

// NUBO_S3_TIMEOUT: seconds in (0, 3600] an object store's connection or transfer may stall
// before the attempt fails (S3 and GCS alike); nullopt when unset or empty.
std::optional<double> store_timeout_s();
// NUBO_GS_ENDPOINT_URL: the Google Cloud Storage endpoint, "http(s)://host[:port]"; nullopt
// when unset or empty.
std::optional<std::string> gs_endpoint();

// NUBO_ADDRESS: the host name or address at which this process's peers on other hosts reach it
// (Gloo's TCP transport); nullopt when unset or empty.
std::optional<std::string> address();

// NUBO_HOST_ID: who counts as "this host" for the processes of a job (those with the same id
// share memory); nullopt when unset or empty (then the boot id and the host name decide).
std::optional<std::string> host_id();

// NUBO_SHM_DISABLE=0|1: processes on one host exchange through Gloo over loopback instead of
// shared memory (default 0), like NCCL_SHM_DISABLE.
bool shm_disabled();

// NUBO_CPU_BIND=0|1: pin each host worker to cores of its own (default 0; nubo-run --cpu-bind
// sets it for its processes).
bool cpu_bind();

// The threads the user gave OpenBLAS and OpenMP: OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS (its
// first level); nullopt when neither is set. nubo-run sets both to each process's share.
struct BlasThreads {
  const char* variable;
  int threads;
};
std::optional<BlasThreads> blas_threads();

// NUBO_TOKEN: the shared secret of nubo-xfer send/serve (docs/net.md), used as given (not
// trimmed: every byte is part of the secret); nullopt when unset or empty.
std::optional<std::string> token();

// NUBO_AUTOTUNE=0|1: whether the trainer may tune its gradient bucket size (default 1).
bool autotune_enabled();
// NUBO_AUTOTUNE_CACHE: the autotune cache file; default $XDG_CACHE_HOME/nubo/autotune.json,
// else $HOME/.cache/nubo/autotune.json, else "" (no cache).
std::string autotune_cache_path();

// NUBO_CATALOG_CACHE: where `nubo-cost catalog update` keeps the catalogs it fetched; default
// $XDG_CACHE_HOME/nubo/catalog, else $HOME/.cache/nubo/catalog, else "" (no cache).
std::string catalog_cache_dir();
// SkyPilot's local catalogs: $HOME/.sky/catalogs ("" without HOME).
std::string skypilot_catalog_dir();
// NUBO_CATALOG_URL_<NAME>: the URL an update fetches the source NAME from ("skypilot-aws" reads
// NUBO_CATALOG_URL_SKYPILOT_AWS); nullopt when unset.
std::optional<std::string> catalog_url(std::string_view source_name);

}  // namespace nubo::env
