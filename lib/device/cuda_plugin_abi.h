/* The contract between libnubo (lib/device/cuda_probe.cpp) and the CUDA plugin libnubo_cuda.so
 * (kernels/). Plain C so that it means the same thing to any compiler on either side: the plugin
 * is built with the CUDA toolkit, libnubo without it, and either may be older than the other.
 *
 * The plugin gathers facts (what the driver, the runtime and NVML said), never conclusions:
 * the diagnoses are made in libnubo (lib/device/cuda_diagnose.cpp), so they can be tested
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

#ifdef __cplusplus
}
#endif

#endif /* NUBO_DEVICE_CUDA_PLUGIN_ABI_H */
