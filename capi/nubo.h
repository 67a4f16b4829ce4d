/*
 * nubo.h: the stable C ABI of nubo (libnubo_c.so).
 *
 * Conventions (docs/abi.md):
 *  - Every call that can fail returns a nubo_status; on failure nubo_last_error() returns the
 *    calling thread's message, valid until that thread's next failing call.
 *  - Handles are opaque; each has a create/free pair, and every free accepts NULL.
 *  - Options and info structs begin with `uint32_t struct_size`. Fill options with their
 *    nubo_*_init(&options, sizeof options); set info.struct_size = sizeof info before asking for
 *    info. nubo reads and writes only the bytes that the size covers, so programs built against
 *    an older, shorter struct keep working with a newer library.
 *  - Strings returned inside info structs belong to the handle they came from and stay valid
 *    until it is freed.
 *  - No C++ exception ever crosses this boundary.
 */
#ifndef NUBO_H
#define NUBO_H

#include <stddef.h>
#include <stdint.h>

#include "nubo/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NUBO_C_BUILDING)
#define NUBO_C_API __attribute__((visibility("default")))
#else
#define NUBO_C_API
#endif

/* ---- Errors and versions ------------------------------------------------------------------ */

/* One to one with nubo::Errc. Values are stable. */
typedef enum nubo_status {
  NUBO_OK = 0,
  NUBO_ERR_INVALID_ARGUMENT = 1,
  NUBO_ERR_NOT_FOUND = 2,
  NUBO_ERR_UNAVAILABLE = 3,
  NUBO_ERR_IO = 4,
  NUBO_ERR_CORRUPT = 5,
  NUBO_ERR_TIMEOUT = 6,
  NUBO_ERR_CANCELLED = 7,
  NUBO_ERR_UNSUPPORTED = 8,
  NUBO_ERR_OUT_OF_MEMORY = 9,
  NUBO_ERR_INTERNAL = 10,
  /* not a value: keeps every int a valid nubo_status in C++ */
  NUBO_STATUS_MAX_ENUM = 0x7fffffff
} nubo_status;

/* A short, static name for a status ("invalid argument"); never NULL. */
NUBO_C_API const char* nubo_status_string(nubo_status status);
/* The calling thread's last error message; "" when there was none. Never NULL. */
NUBO_C_API const char* nubo_last_error(void);
/* The library's version as "MAJOR.MINOR.PATCH". */
NUBO_C_API const char* nubo_version(void);
/* NUBO_ABI_VERSION of the library actually loaded; compare with the header's. */
NUBO_C_API int nubo_abi_version(void);
/*
 * Parses every environment variable nubo reads (docs/env.md) that is set: NUBO_ERR_INVALID_ARGUMENT
 * for the first malformed one, named in nubo_last_error(). Call it first, so that a typo stops
 * the program before any work.
 */
NUBO_C_API nubo_status nubo_check_environment(void);

/*
 * The one element type of the ABI. Buffers and collectives hold F32 to I64; TF32 is F32
 * storage multiplied in TensorFloat-32, a compute precision the cost model prices (no buffer
 * holds it). Values are stable; a newer library may add more.
 */
typedef enum nubo_dtype {
  NUBO_DTYPE_F32 = 0,
  NUBO_DTYPE_F16 = 1,  /* IEEE binary16 */
  NUBO_DTYPE_BF16 = 2, /* bfloat16 */
  NUBO_DTYPE_I32 = 3,
  NUBO_DTYPE_I64 = 4,
  NUBO_DTYPE_TF32 = 5,
  /* not a value: keeps every int a valid nubo_dtype in C++ */
  NUBO_DTYPE_MAX_ENUM = 0x7fffffff
} nubo_dtype;

/* Reduction operators of the collectives (nubo_parallel.h) and the sharded optimizer
   (nubo_optimizer.h). Values are stable. Integer avg rounds towards zero. */
typedef enum nubo_reduce_op {
  NUBO_REDUCE_SUM = 0,
  NUBO_REDUCE_AVG = 1,
  NUBO_REDUCE_MAX = 2,
  NUBO_REDUCE_MIN = 3,
  /* not a value: keeps every int a valid nubo_reduce_op in C++ */
  NUBO_REDUCE_OP_MAX_ENUM = 0x7fffffff
} nubo_reduce_op;

/* ---- Devices ------------------------------------------------------------------------------ */

/* What serves a device (C++: nubo::Backend). */
typedef enum nubo_backend {
  NUBO_BACKEND_HOST = 0,
  NUBO_BACKEND_SIM = 1,
  NUBO_BACKEND_CUDA = 2,
  /* not a value: keeps every int a valid nubo_backend in C++ */
  NUBO_BACKEND_MAX_ENUM = 0x7fffffff
} nubo_backend;

/* How two GPUs are connected, as nvidia-smi topo -m names it (C++: nubo::LinkKind). */
typedef enum nubo_link_kind {
  NUBO_LINK_SELF = 0, /* a device and itself ("X") */
  NUBO_LINK_NVLINK = 1,
  NUBO_LINK_PIX = 2,
  NUBO_LINK_PXB = 3,
  NUBO_LINK_PHB = 4,
  NUBO_LINK_NODE = 5,
  NUBO_LINK_SYS = 6,
  NUBO_LINK_UNKNOWN = 7,
  /* not a value: keeps every int a valid nubo_link_kind in C++ */
  NUBO_LINK_KIND_MAX_ENUM = 0x7fffffff
} nubo_link_kind;

/* How serious a diagnosis is (C++: nubo::Severity). */
typedef enum nubo_severity {
  NUBO_SEVERITY_INFO = 0,
  NUBO_SEVERITY_WARNING = 1,
  NUBO_SEVERITY_ERROR = 2,
  /* not a value: keeps every int a valid nubo_severity in C++ */
  NUBO_SEVERITY_MAX_ENUM = 0x7fffffff
} nubo_severity;

typedef struct nubo_device_report nubo_device_report;

typedef struct nubo_device_discover_options {
  uint32_t struct_size;
  const char* sim_devices;       /* as NUBO_SIM_DEVICES; NULL: read the variable */
  const char* sim_topology_file; /* as NUBO_SIM_TOPOLOGY; NULL: read the variable */
  int probe_cuda;                /* nonzero (default): probe CUDA devices through the plugin */
  const char* cuda_plugin_path;  /* as NUBO_CUDA_PLUGIN; NULL: beside the library */
} nubo_device_discover_options;

/*
 * Fills *options with the defaults. Pass sizeof *options: nubo writes only that many bytes (the
 * init function cannot know the caller's sizeof otherwise), then sets options->struct_size.
 * NULL options or a size smaller than the struct_size field: NUBO_ERR_INVALID_ARGUMENT.
 */
NUBO_C_API nubo_status nubo_device_discover_options_init(nubo_device_discover_options* options,
                                                         size_t struct_size);
/*
 * options may be NULL (defaults). On success *out is a report to free with nubo_device_report_free;
 * on failure *out is NULL. A malformed setting (option or NUBO_* variable) is
 * NUBO_ERR_INVALID_ARGUMENT; a machine without GPUs is not an error but a diagnosis.
 */
NUBO_C_API nubo_status nubo_device_discover(const nubo_device_discover_options* options,
                                            nubo_device_report** out);
NUBO_C_API void nubo_device_report_free(nubo_device_report* report);

/* A GPU, real (backend CUDA) or simulated (SIM) (C++: nubo::Device). */
typedef struct nubo_device_info {
  uint32_t struct_size;
  nubo_backend backend;
  int index;         /* nubo's index: the position in the report's devices */
  int ordinal;       /* the backend's own index (the CUDA device ordinal) */
  const char* name;  /* as the device reports it, e.g. "NVIDIA A100-SXM4-80GB" */
  const char* model; /* the GPU model table's key, e.g. "A100-SXM4-80GB"; "" if unknown */
  const char* uuid;
  const char* pci_bus_id;
  int cc_major;
  int cc_minor;
  int multiprocessors;
  int clock_mhz;         /* boost clock */
  uint64_t memory_total; /* bytes */
  uint64_t memory_free;  /* bytes */
  double memory_bandwidth_gbs;
  double peak_tflops_fp32; /* dense peak; 0 where unknown (C++: peak.fp32) */
  double peak_tflops_tf32; /* (C++: peak.tf32) */
  double peak_tflops_fp16; /* (C++: peak.fp16) */
  double peak_tflops_bf16; /* (C++: peak.bf16) */
  const char* peak_source; /* "device" (its own figures) or "catalog" (the model table) */
  int numa_node;           /* < 0: none (unknown) */
  int mig_enabled;         /* nonzero: MIG mode is on */
} nubo_device_info;

/* The host's CPUs and memory; always present (C++: nubo::HostCpu). */
typedef struct nubo_host_info {
  uint32_t struct_size;
  const char* model;
  int logical_cores;
  int physical_cores;
  int sockets;
  int numa_nodes;
  uint64_t memory_total;     /* bytes */
  uint64_t memory_available; /* bytes */
  const char* blas;          /* the BLAS in use */
} nubo_host_info;

/* The CUDA driver and runtime, as far as they could be found (C++: nubo::DriverInfo). */
typedef struct nubo_driver_info {
  uint32_t struct_size;
  int loaded;                 /* nonzero: libcuda.so.1 could be loaded */
  int driver_version;         /* highest CUDA version the driver supports, e.g. 12040; 0 if none */
  int runtime_version;        /* CUDA runtime of the plugin, e.g. 13000; 0 if no plugin */
  const char* driver_release; /* the kernel driver's version, e.g. "580.65.06"; may be "" */
} nubo_driver_info;

/* The connection between two GPUs (C++: nubo::Link). */
typedef struct nubo_link_info {
  uint32_t struct_size;
  nubo_link_kind kind;
  int nvlinks;     /* NVLink links when kind is NVLINK */
  int peer_access; /* nonzero: direct peer-to-peer access works */
  /* "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS", "?" (C++: name()) */
  const char* name;
} nubo_link_info;

/* A finding about the machine, with a stable code (C++: nubo::Diagnosis). */
typedef struct nubo_diagnosis_info {
  uint32_t struct_size;
  const char* code; /* e.g. "no-driver" */
  nubo_severity severity;
  const char* message; /* what is wrong */
  const char* advice;  /* what to do about it */
} nubo_diagnosis_info;

/* A NIC (InfiniBand, EFA or Ethernet), as nvidia-smi topo -m lists them (C++: nubo::Nic). */
typedef struct nubo_nic_info {
  uint32_t struct_size;
  const char* name;       /* "mlx5_0", "efa_0", or the interface ("eth0") */
  const char* kind;       /* "infiniband", "efa" or "ethernet" */
  const char* interface;  /* the network interface it backs; "" when none */
  const char* pci_bus_id; /* "0000:0c:00.0", as sysfs writes it */
  int numa_node;          /* < 0: none (unknown) */
  double rate_gbps;       /* link rate in Gb/s; 0 unknown or down */
} nubo_nic_info;

typedef struct nubo_device_select_request {
  uint32_t struct_size;
  int count; /* 0: every device that qualifies */
  uint64_t min_memory;
  int min_cc_major;
  int min_cc_minor;
} nubo_device_select_request;

/* Fills *request with the defaults (count 1, no minimum); struct_size as for options. */
NUBO_C_API nubo_status nubo_device_select_request_init(nubo_device_select_request* request,
                                                       size_t struct_size);

/*
 * Reading a report. Each call that fills an info struct needs out->struct_size set (the caller's
 * sizeof); a NULL report or out, or an index out of range, is NUBO_ERR_INVALID_ARGUMENT.
 * Reports are immutable: several threads may read one at once.
 */

/* Number of GPUs (cuda or sim) in the report; 0 for NULL. */
NUBO_C_API size_t nubo_device_report_device_count(const nubo_device_report* report);
NUBO_C_API nubo_status nubo_device_report_device(const nubo_device_report* report, size_t index,
                                                 nubo_device_info* out);
NUBO_C_API nubo_status nubo_device_report_host(const nubo_device_report* report,
                                               nubo_host_info* out);
NUBO_C_API nubo_status nubo_device_report_driver(const nubo_device_report* report,
                                                 nubo_driver_info* out);
NUBO_C_API nubo_status nubo_device_report_link(const nubo_device_report* report, size_t i, size_t j,
                                               nubo_link_info* out);
NUBO_C_API size_t nubo_device_report_diagnosis_count(const nubo_device_report* report);
NUBO_C_API nubo_status nubo_device_report_diagnosis(const nubo_device_report* report, size_t index,
                                                    nubo_diagnosis_info* out);
NUBO_C_API size_t nubo_device_report_nic_count(const nubo_device_report* report);
NUBO_C_API nubo_status nubo_device_report_nic(const nubo_device_report* report, size_t index,
                                              nubo_nic_info* out);
/* How GPU `gpu` reaches NIC `nic` in the PCIe tree: kind PIX, PXB, PHB, NODE, SYS or UNKNOWN
 * (nvlinks and peer_access 0), name as nvidia-smi topo -m prints it. */
NUBO_C_API nubo_status nubo_device_report_gpu_nic(const nubo_device_report* report, size_t gpu,
                                                  size_t nic, nubo_link_info* out);
/* The index of the NIC GPU `gpu` should use (the closest, then the fastest); -1 when there is
 * none, or for a bad report or index. */
NUBO_C_API int nubo_device_report_preferred_nic(const nubo_device_report* report, size_t gpu);
/*
 * The report as JSON (docs/device-report.schema.json), NUL-terminated, into buf of capacity
 * bytes. *needed (if not NULL) receives the size including the NUL. A too-small buffer (or
 * buf == NULL) gives NUBO_ERR_INVALID_ARGUMENT with *needed set (and buf[0] = '\0' when
 * capacity > 0): call again with that size.
 */
NUBO_C_API nubo_status nubo_device_report_json(const nubo_device_report* report, char* buf,
                                               size_t capacity, size_t* needed);
/*
 * The best-connected group meeting the request (NULL: the defaults): device indices, ascending,
 * into indices[0..*count). capacity is the number of elements of indices; when the group is
 * larger, NUBO_ERR_INVALID_ARGUMENT with *count set to its size: call again with that capacity.
 * No qualifying group: NUBO_ERR_UNAVAILABLE, with the reason in nubo_last_error().
 */
NUBO_C_API nubo_status nubo_device_report_select(const nubo_device_report* report,
                                                 const nubo_device_select_request* request,
                                                 size_t* indices, size_t capacity, size_t* count);

#ifdef __cplusplus
}
#endif

/*
 * Each further capability has a header of its own, capi/nubo_<capability>.h, included here so
 * that nubo.h stays the one header to include. Each begins with its include guard and then
 * includes nubo.h for the common types.
 */
#include "nubo_copy.h"
#include "nubo_cost.h"
#include "nubo_health.h"
#include "nubo_interruption.h"
#include "nubo_net.h"
#include "nubo_optimizer.h"
#include "nubo_parallel.h"
#include "nubo_s3.h"
#include "nubo_train.h"
#include "nubo_transfer.h"
#include "nubo_units.h"

#endif /* NUBO_H */
