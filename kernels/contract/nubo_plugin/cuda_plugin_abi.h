/* The contract between libnubo (lib/device/cuda/cuda_probe.cpp) and the CUDA plugin libnubo_cuda.so
 * (kernels/). Plain C so that it means the same thing to any compiler on either side: the plugin
 * is built with the CUDA toolkit, libnubo without it, and either may be older than the other.
 *
 * The plugin gathers facts (what the driver, the runtime and NVML said), never conclusions:
 * the diagnoses are made in libnubo (lib/device/cuda/cuda_diagnose.cpp), so they can be tested
 * without a GPU and changed without rebuilding the plugin.
 *
 * Compatibility: within one NUBO_CUDA_PLUGIN_ABI_VERSION, fields are only ever appended. The
 * caller sets struct_size and abi_version; the plugin refuses another abi_version, and writes
 * at most struct_size bytes, then sets struct_size to the number it wrote. A layout change
 * (not an append) bumps the ABI version. */
#ifndef NUBO_DEVICE_CUDA_PLUGIN_ABI_H
#define NUBO_DEVICE_CUDA_PLUGIN_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NUBO_CUDA_PLUGIN_ABI_VERSION 1u
/* The one symbol libnubo_cuda.so exports. */
#define NUBO_CUDA_PLUGIN_ENTRY "nubo_cuda_plugin_probe"

#define NUBO_CUDA_MAX_DEVICES 64 /* devices beyond this are counted but not listed */
#define NUBO_CUDA_NAME_SIZE 96   /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NUBO_CUDA_UUID_SIZE 96   /* NVML_DEVICE_UUID_V2_BUFFER_SIZE (MIG UUIDs are longer) */
#define NUBO_CUDA_BUS_ID_SIZE 32 /* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE */
#define NUBO_CUDA_MESSAGE_SIZE 512
#define NUBO_CUDA_ENV_SIZE 4096 /* room for 64 UUIDs in CUDA_VISIBLE_DEVICES */

/* Return values of the entry point. Anything but OK means the facts must not be used. */
#define NUBO_CUDA_PLUGIN_OK 0
#define NUBO_CUDA_PLUGIN_BAD_ARGUMENT 1 /* NULL, or struct_size too small for the header */
#define NUBO_CUDA_PLUGIN_ABI_MISMATCH 2 /* abi_version differs; facts->abi_version says ours */
#define NUBO_CUDA_PLUGIN_INTERNAL 3     /* an exception or allocation failure inside */

/* "Not asked" or "the call failed": results below use it where 0 would be a real answer. */
#define NUBO_CUDA_UNKNOWN (-1)
/* A driver or NVML entry point that the loaded library does not export. */
#define NUBO_CUDA_MISSING_SYMBOL (-2)

/* One device as the CUDA driver enumerates it (after CUDA_VISIBLE_DEVICES and
 * CUDA_DEVICE_ORDER), so devices[i] is CUDA ordinal i. */
typedef struct nubo_cuda_device_facts {
  char name[NUBO_CUDA_NAME_SIZE]; /* cuDeviceGetName, e.g. "NVIDIA H100 80GB HBM3" */
  char uuid[NUBO_CUDA_UUID_SIZE]; /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; "" unknown */
  char pci_bus_id[NUBO_CUDA_BUS_ID_SIZE]; /* "00000000:07:00.0" as nvidia-smi writes it */
  int32_t pci_domain, pci_bus, pci_device;
  int32_t cc_major, cc_minor;
  int32_t multiprocessors;
  int32_t clock_khz;             /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE (the boost clock) */
  int32_t memory_clock_khz;      /* CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE */
  int32_t memory_bus_width_bits; /* CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH */
  uint64_t memory_total;         /* bytes, cuDeviceTotalMem_v2 */
  int32_t nvml_index; /* the same GPU in nvml_devices (matched by PCI address); -1: none */
  int32_t numa_node;  /* from NVML or sysfs; -1 unknown */
} nubo_cuda_device_facts;

/* One GPU as NVML lists it: every GPU of the machine, CUDA_VISIBLE_DEVICES does not apply. */
typedef struct nubo_cuda_nvml_device_facts {
  char name[NUBO_CUDA_NAME_SIZE];
  char uuid[NUBO_CUDA_UUID_SIZE];
  char pci_bus_id[NUBO_CUDA_BUS_ID_SIZE];
  int32_t pci_domain, pci_bus, pci_device;
  int32_t has_memory; /* 1 when memory_total/free were read */
  uint64_t memory_total, memory_free;
  int32_t mig_mode;       /* current MIG mode: 1 on, 0 off, -1 unknown or not supported */
  int32_t numa_node;      /* -1 unknown */
  int32_t nvswitch_links; /* active NVLinks that end at an NVSwitch */
} nubo_cuda_nvml_device_facts;

typedef struct nubo_cuda_facts {
  uint32_t struct_size; /* in: sizeof the caller's struct; out: bytes the plugin wrote */
  uint32_t abi_version; /* in: the caller's NUBO_CUDA_PLUGIN_ABI_VERSION; out: the plugin's */

  /* The environment the driver saw. */
  char device_order[32];             /* CUDA_DEVICE_ORDER in force, e.g. "PCI_BUS_ID" */
  int32_t device_order_set;          /* 1: it was unset and the plugin set it to PCI_BUS_ID */
  int32_t visible_devices_set;       /* 1: CUDA_VISIBLE_DEVICES is set (maybe to "") */
  int32_t visible_devices_truncated; /* 1: longer than the field; the text below is cut */
  char visible_devices[NUBO_CUDA_ENV_SIZE];

  /* The CUDA runtime the plugin was built with (cudart_static: works without a driver). */
  int32_t runtime_version; /* e.g. 13000; 0 unknown */
  int32_t runtime_result;  /* cudaError_t of cudaRuntimeGetVersion */

  /* The driver: libcuda.so.1. */
  int32_t driver_loaded;                     /* dlopen succeeded */
  char driver_error[NUBO_CUDA_MESSAGE_SIZE]; /* dlerror() when it did not */
  char driver_path[NUBO_CUDA_MESSAGE_SIZE];  /* the file that was loaded, when known */
  int32_t driver_version;                    /* cuDriverGetVersion, e.g. 12040; 0 unknown */
  int32_t driver_version_result;             /* CUresult, or NUBO_CUDA_MISSING_SYMBOL */
  int32_t driver_was_initialised; /* 1: cuInit had run in this process before the probe */
  int32_t init_called;            /* 0: skipped (driver older than the runtime) */
  int32_t init_result;            /* CUresult of cuInit(0), or NUBO_CUDA_MISSING_SYMBOL */
  char init_error_name[64];       /* cuGetErrorName(init_result), e.g. "CUDA_ERROR_NO_DEVICE" */
  int32_t device_count_result;    /* CUresult of cuDeviceGetCount; -1 not asked */
  int32_t device_count;           /* what the driver said; may exceed devices_listed */
  int32_t devices_listed;         /* entries of devices[] filled */
  nubo_cuda_device_facts devices[NUBO_CUDA_MAX_DEVICES];
  /* cuDeviceCanAccessPeer(i, j) over CUDA ordinals: 1 yes, 0 no, -1 unknown. */
  int32_t peer_access[NUBO_CUDA_MAX_DEVICES][NUBO_CUDA_MAX_DEVICES];

  /* NVML: libnvidia-ml.so.1, shipped with the driver. Its absence is a fact, not an error. */
  int32_t nvml_loaded;
  char nvml_error[NUBO_CUDA_MESSAGE_SIZE]; /* dlerror(), a missing symbol, or nvmlErrorString */
  int32_t nvml_init_result;                /* nvmlReturn_t of nvmlInit_v2; -1 not asked */
  char driver_release[80];                 /* nvmlSystemGetDriverVersion, e.g. "580.65.06" */
  int32_t nvml_device_count;               /* nvmlDeviceGetCount_v2 */
  int32_t nvml_devices_listed;
  nubo_cuda_nvml_device_facts nvml_devices[NUBO_CUDA_MAX_DEVICES];
  /* Over NVML indices: nvmlDeviceGetTopologyCommonAncestor (NVML_TOPOLOGY_INTERNAL=0,
   * SINGLE=10, MULTIPLE=20, HOSTBRIDGE=30, NODE=40, SYSTEM=50; -1 unknown), and the number of
   * active NVLinks from GPU i whose far end is GPU j. */
  int32_t topology_level[NUBO_CUDA_MAX_DEVICES][NUBO_CUDA_MAX_DEVICES];
  int32_t nvlinks[NUBO_CUDA_MAX_DEVICES][NUBO_CUDA_MAX_DEVICES];
} nubo_cuda_facts;

/* Fills *facts. Thread-safe; never throws; may set CUDA_DEVICE_ORDER (see the plugin). */
typedef int (*nubo_cuda_plugin_probe_fn)(nubo_cuda_facts* facts);

/* ==== Health (a third entry point; the probe above is unchanged) ===========================
 * What NVML says of each GPU's health: error counters, clocks, links, use, and the critical
 * XID events that arrive while the call waits. Facts only: libnubo
 * (lib/device/health/) decides what is ok, warn or fail. The same struct_size / abi_version
 * rules as the probe; every count is -1 when NVML does not know it or the GPU lacks it. */
#define NUBO_CUDA_HEALTH_ENTRY "nubo_cuda_plugin_health"
#define NUBO_CUDA_HEALTH_ABI_VERSION 1u
#define NUBO_CUDA_MAX_NVLINKS 18
#define NUBO_CUDA_MAX_PROCESSES 16
#define NUBO_CUDA_MAX_XIDS 64

typedef struct nubo_cuda_nvlink_health {
  int32_t state; /* 1 up, 0 down, -1 not present */
  int32_t reserved;
  int64_t replay, recovery, crc_flit, crc_data; /* nvmlDeviceGetNvLinkErrorCounter */
} nubo_cuda_nvlink_health;

typedef struct nubo_cuda_process {
  uint32_t pid;
  uint32_t reserved;
  uint64_t used_memory; /* bytes; 0 when the driver does not say */
} nubo_cuda_process;

typedef struct nubo_cuda_gpu_health {
  char uuid[NUBO_CUDA_UUID_SIZE];
  char pci_bus_id[NUBO_CUDA_BUS_ID_SIZE];
  int32_t ecc_enabled;                            /* current ECC mode */
  int32_t retired_pages_pending;                  /* 1: a retirement awaits a reset */
  int64_t ecc_sbe_volatile, ecc_dbe_volatile;     /* since the driver loaded */
  int64_t ecc_sbe_aggregate, ecc_dbe_aggregate;   /* over the GPU's life */
  int32_t remap_correctable, remap_uncorrectable; /* rows remapped (A100 and later) */
  int32_t remap_pending, remap_failed;            /* 1: needs a reset; 1: RMA */
  uint64_t clock_event_reasons;                   /* nvmlClocksEventReason bits */
  int32_t clock_event_reasons_known;
  int32_t temperature_c, temperature_slowdown_c, temperature_shutdown_c;
  int32_t power_mw, power_limit_mw;
  int32_t pcie_gen, pcie_width, pcie_gen_max, pcie_width_max; /* as trained, and the most */
  int64_t pcie_replays;                                       /* nvmlDeviceGetPcieReplayCounter */
  int32_t persistence_mode;                                   /* 1 on, 0 off */
  int32_t mig_mode;
  int32_t fabric_state;  /* nvmlGpuFabricState_t: 0 not supported, 1 not started, 2 in
                            progress, 3 completed; -1 unknown */
  int32_t fabric_status; /* its nvmlReturn_t once completed */
  nubo_cuda_nvlink_health nvlinks[NUBO_CUDA_MAX_NVLINKS];
  int32_t processes_known;
  int32_t process_count; /* may exceed the entries listed */
  nubo_cuda_process processes[NUBO_CUDA_MAX_PROCESSES];
} nubo_cuda_gpu_health;

typedef struct nubo_cuda_xid_event {
  int32_t gpu; /* NVML index */
  int32_t xid;
  uint64_t timestamp_us;
} nubo_cuda_xid_event;

typedef struct nubo_cuda_health {
  uint32_t struct_size; /* as nubo_cuda_facts */
  uint32_t abi_version; /* NUBO_CUDA_HEALTH_ABI_VERSION */
  int32_t wait_ms;      /* in: how long to wait for critical XID events (0: do not wait) */
  int32_t nvml_loaded;
  char nvml_error[NUBO_CUDA_MESSAGE_SIZE];
  int32_t nvml_init_result;
  int32_t gpu_count, gpus_listed; /* NVML's: every GPU of the machine */
  int32_t events_supported;       /* 1: XID events could be registered */
  int32_t xid_count;              /* may exceed the entries listed */
  nubo_cuda_xid_event xids[NUBO_CUDA_MAX_XIDS];
  nubo_cuda_gpu_health gpus[NUBO_CUDA_MAX_DEVICES];
} nubo_cuda_health;

/* Fills *health. Thread-safe; never throws; blocks up to wait_ms. */
typedef int (*nubo_cuda_plugin_health_fn)(nubo_cuda_health* health);

/* ==== The CUDA backend (appended; the probe above is unchanged) ===========================
 * A second entry point, nubo_cuda_backend_v2, returns a table of functions through which
 * libnubo (lib/device/cuda/cuda_backend.cpp, lib/parallel/communicators/nccl_communicator.cpp) runs
 * work on a GPU: memory, copies, streams, events, GEMM (cuBLAS), the general elementwise kernels
 * (kernels/cuda/elementwise.cu) and NCCL. Kernels of one user of the backend are not here: the
 * trainer's model kernels have a table of their own
 * (nubo_plugin/cuda_kernels_abi.h).
 *
 * Compatibility: the table's layout is fixed for NUBO_CUDA_BACKEND_API_VERSION 2; later
 * functions are only appended, and table->struct_size says how many the plugin has. A layout
 * change is a new entry point (version 1 had the model kernels in this table and no streams;
 * nubo_cuda_backend_v3 would come next).
 *
 * Like the probe, the plugin reports facts: every function returns NUBO_CUDA_CALL_OK, or
 * NUBO_CUDA_CALL_FAILED with *status naming the library, its own result code, the call and the
 * library's message. libnubo decides what they mean (lib/device/cuda/cuda_backend_errors.cpp).
 * Pointers: device memory of the same GPU; `status` is never NULL. Every enqueuing call is
 * asynchronous on the backend's current stream. Functions never throw. */
#define NUBO_CUDA_BACKEND_ENTRY "nubo_cuda_backend_v2"
#define NUBO_CUDA_BACKEND_API_VERSION 2u

#define NUBO_CUDA_CALL_OK 0
#define NUBO_CUDA_CALL_FAILED 1
#define NUBO_CUDA_CALL_IN_PROGRESS 2 /* NCCL nonblocking: poll nccl_async_error */

/* nubo_cuda_status.library */
#define NUBO_CUDA_LIB_NONE 0
#define NUBO_CUDA_LIB_RUNTIME 1 /* result: cudaError_t */
#define NUBO_CUDA_LIB_CUBLAS 2  /* result: cublasStatus_t */
#define NUBO_CUDA_LIB_NCCL 3    /* result: ncclResult_t */
#define NUBO_CUDA_LIB_PLUGIN 4  /* result: NUBO_CUDA_PLUGIN_BAD_ARGUMENT or _INTERNAL */

typedef struct nubo_cuda_status {
  int32_t library;                      /* NUBO_CUDA_LIB_* */
  int32_t result;                       /* that library's result code */
  char call[64];                        /* the failing call, e.g. "cudaMalloc" */
  char message[NUBO_CUDA_MESSAGE_SIZE]; /* the library's words, e.g. "out of memory" */
} nubo_cuda_status;

/* One GPU: its own stream, the stream in use (its own or the application's), a cuBLAS handle
 * bound to the stream in use. */
typedef struct nubo_cuda_backend nubo_cuda_backend;
typedef struct nubo_cuda_event nubo_cuda_event;
typedef struct nubo_cuda_comm nubo_cuda_comm; /* one rank of an NCCL communicator */

/* cudaMemcpyKind values. */
#define NUBO_CUDA_COPY_TO_DEVICE 1
#define NUBO_CUDA_COPY_TO_HOST 2
#define NUBO_CUDA_COPY_ON_DEVICE 3

/* Row-major C = alpha op(A) op(B) + beta C, as DeviceBackend::gemm
 * (lib/device/backend/backend.hpp); dtype is a nubo::DType value (0 f32, 1 f16, 2 bf16, 5 tf32: f32
 * data); leading dimensions already filled in. */
typedef struct nubo_cuda_gemm_args {
  int32_t trans_a, trans_b, dtype, reserved;
  int64_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  const void* a;
  const void* b;
  void* c;
} nubo_cuda_gemm_args;

/* What cudaPointerGetAttributes says of a pointer. */
#define NUBO_CUDA_MEMORY_UNREGISTERED 0 /* ordinary host memory CUDA does not know */
#define NUBO_CUDA_MEMORY_HOST 1         /* pinned host memory */
#define NUBO_CUDA_MEMORY_DEVICE 2
#define NUBO_CUDA_MEMORY_MANAGED 3

#define NUBO_CUDA_NCCL_ID_SIZE 128 /* NCCL_UNIQUE_ID_BYTES */

#define NUBO_CUDA_ALL_REDUCE 1
#define NUBO_CUDA_BROADCAST 2
#define NUBO_CUDA_ALL_GATHER 3
#define NUBO_CUDA_REDUCE_SCATTER 4
#define NUBO_CUDA_ALL_TO_ALL 5 /* count: elements of each rank pair's block */

/* dtype: nubo::DType value; op: nubo::ReduceOp value (0 sum, 1 avg, 2 max, 3 min).
 * all_reduce and broadcast are in place when send == recv. */
typedef struct nubo_cuda_collective_args {
  int32_t kind, dtype, op, root;
  const void* send;
  void* recv;
  uint64_t count; /* elements per rank: all_gather's input, reduce_scatter's output */
} nubo_cuda_collective_args;

/* The fused optimiser update's constants (math::OptimizerStep): kind 0 SGD with momentum,
 * 1 Adam (L2 weight decay), 2 AdamW; c1 = 1/(1-beta1^t), c2 = 1/(1-beta2^t); every gradient is
 * multiplied by grad_scale first. */
typedef struct nubo_cuda_optimizer_args {
  int32_t kind;
  float lr, momentum, beta1, beta2, eps, weight_decay, c1, c2, grad_scale;
} nubo_cuda_optimizer_args;

typedef struct nubo_cuda_backend_api {
  uint32_t struct_size; /* sizeof the plugin's table: later fields exist when it covers them */
  uint32_t api_version; /* NUBO_CUDA_BACKEND_API_VERSION */

  /* Device: cudaSetDevice(ordinal), a non-blocking stream, a cuBLAS handle on it. */
  int (*create)(int32_t ordinal, nubo_cuda_backend** out, nubo_cuda_status* status);
  void (*destroy)(nubo_cuda_backend* b); /* synchronises first */
  int (*memory_info)(nubo_cuda_backend* b, uint64_t* free_bytes, uint64_t* total_bytes,
                     nubo_cuda_status* status);

  int (*allocate)(nubo_cuda_backend* b, uint64_t bytes, void** out, nubo_cuda_status* status);
  int (*free)(nubo_cuda_backend* b, void* ptr, nubo_cuda_status* status);
  /* cudaPointerGetAttributes: *kind is NUBO_CUDA_MEMORY_*, *ordinal the device it lives on
   * (-1 for host memory). */
  int (*pointer_info)(const void* ptr, int32_t* kind, int32_t* ordinal, nubo_cuda_status* status);
  int (*copy)(nubo_cuda_backend* b, void* dst, const void* src, uint64_t bytes, int32_t kind,
              nubo_cuda_status* status);
  int (*synchronize)(nubo_cuda_backend* b, nubo_cuda_status* status);

  /* Streams. use_stream makes `stream` (a cudaStream_t; NULL is the legacy default stream) the
   * one every later call queues on, after the work queued so far (it waits for the previous
   * stream through an event), and binds the cuBLAS handle to it; use_own_stream goes back.
   * native gives the stream in use and the cuBLAS handle. */
  int (*use_stream)(nubo_cuda_backend* b, void* stream, nubo_cuda_status* status);
  int (*use_own_stream)(nubo_cuda_backend* b, nubo_cuda_status* status);
  void (*native)(nubo_cuda_backend* b, void** stream, void** cublas);

  int (*event_create)(nubo_cuda_backend* b, nubo_cuda_event** out, nubo_cuda_status* status);
  void (*event_destroy)(nubo_cuda_event* e);
  int (*event_record)(nubo_cuda_backend* b, nubo_cuda_event* e, nubo_cuda_status* status);
  int (*event_wait)(nubo_cuda_backend* b, nubo_cuda_event* e, nubo_cuda_status* status);
  /* cudaStreamWaitEvent on the stream in use for a cudaEvent_t the application made. */
  int (*event_wait_native)(nubo_cuda_backend* b, void* cuda_event, nubo_cuda_status* status);
  /* *done = 1 when complete (cudaEventQuery == cudaSuccess), 0 when not yet. */
  int (*event_query)(nubo_cuda_event* e, int32_t* done, nubo_cuda_status* status);
  int (*event_synchronize)(nubo_cuda_event* e, nubo_cuda_status* status);
  void* (*event_native)(nubo_cuda_event* e); /* the cudaEvent_t */

  int (*gemm)(nubo_cuda_backend* b, const nubo_cuda_gemm_args* g, nubo_cuda_status* status);

  /* The elementwise kernels of DeviceBackend. fill: n elements of elem_bytes (1, 2, 4, 8)
   * set to the low bytes of pattern. scale, axpy: dtype 0 f32, 1 f16, 2 bf16, computed in
   * f32 and rounded once. */
  int (*fill)(nubo_cuda_backend* b, void* x, uint64_t n, uint32_t elem_bytes, uint64_t pattern,
              nubo_cuda_status* st);
  int (*scale)(nubo_cuda_backend* b, int32_t dtype, void* x, uint64_t n, float alpha,
               nubo_cuda_status* st);
  int (*axpy)(nubo_cuda_backend* b, int32_t dtype, uint64_t n, float alpha, const void* x, void* y,
              nubo_cuda_status* st);

  /* NCCL. ncclGetVersion, e.g. 22809. */
  int (*nccl_version)(int32_t* version, nubo_cuda_status* status);
  int (*nccl_unique_id)(uint8_t id[NUBO_CUDA_NCCL_ID_SIZE], nubo_cuda_status* status);
  /* ncclCommInitAll over n backends of this process: out[i] is rank i on backends[i]. */
  int (*nccl_init_all)(nubo_cuda_backend* const* backends, int32_t n, nubo_cuda_comm** out,
                       nubo_cuda_status* status);
  /* ncclCommInitRankConfig, nonblocking: returns IN_PROGRESS while peers are still joining;
   * poll nccl_async_error, and nccl_abort when they do not come in time. */
  int (*nccl_init_rank)(nubo_cuda_backend* b, int32_t nranks,
                        const uint8_t id[NUBO_CUDA_NCCL_ID_SIZE], int32_t rank,
                        nubo_cuda_comm** out, nubo_cuda_status* status);
  /* ncclCommGetAsyncError: *result is an ncclResult_t (0 ok, 7 still in progress). */
  int (*nccl_async_error)(nubo_cuda_comm* c, int32_t* result, nubo_cuda_status* status);
  /* Enqueues a collective on b's stream in use; IN_PROGRESS on a nonblocking communicator
   * means the enqueue itself is still running (poll nccl_async_error). */
  int (*nccl_collective)(nubo_cuda_comm* c, nubo_cuda_backend* b,
                         const nubo_cuda_collective_args* args, nubo_cuda_status* status);
  /* ncclCommAbort: stops its kernels, frees it. Never blocks on peers. */
  void (*nccl_abort)(nubo_cuda_comm* c);
  /* ncclCommDestroy, once its work has completed (the caller makes sure). */
  int (*nccl_destroy)(nubo_cuda_comm* c, nubo_cuda_status* status);
  void* (*nccl_native)(nubo_cuda_comm* c); /* the ncclComm_t */

  /* Appended: page-locked host memory (cudaHostAlloc, portable to every GPU) for copies at
   * the link's full rate, and a copy from another GPU's memory (cudaMemcpyPeerAsync on b's
   * stream in use: peer to peer where the pair has it, staged through the host otherwise). */
  int (*host_allocate)(uint64_t bytes, void** out, nubo_cuda_status* status);
  int (*host_free)(void* ptr, nubo_cuda_status* status);
  int (*peer_copy)(nubo_cuda_backend* b, void* dst, const void* src, int32_t src_ordinal,
                   uint64_t bytes, nubo_cuda_status* status);

  /* Appended: mixed precision and the optimiser (DeviceBackend's cast, unscale_check and
   * optimizer_step; dtypes 0 f32, 1 f16, 2 bf16). stats: two floats of device memory. */
  int (*cast)(nubo_cuda_backend* b, int32_t from, const void* src, int32_t to, void* dst,
              uint64_t n, nubo_cuda_status* status);
  int (*unscale_check)(nubo_cuda_backend* b, int32_t dtype, void* x, uint64_t n, float inv_scale,
                       float* stats, nubo_cuda_status* status);
  /* param_dtype -1 (param null): no low-precision copy written. */
  int (*optimizer_step)(nubo_cuda_backend* b, const nubo_cuda_optimizer_args* args, uint64_t n,
                        float* master, int32_t grad_dtype, const void* grad, float* m, float* v,
                        int32_t param_dtype, void* param, nubo_cuda_status* status);
} nubo_cuda_backend_api;

/* The table, static in the plugin (never NULL, never freed). */
typedef const nubo_cuda_backend_api* (*nubo_cuda_backend_v2_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_DEVICE_CUDA_PLUGIN_ABI_H */
