/* A fake libcuda.so.1 for the CUDA plugin's scenario tests: the driver API entry points nubo
 * uses, over the machine of fake_machine.h. Like the real driver it applies
 * CUDA_VISIBLE_DEVICES (indices or UUID prefixes, stopping at the first entry that names no
 * device) and answers cuInit with CUDA_ERROR_NO_DEVICE when nothing is left.
 *
 *   FAKE_CUDA_DRIVER_VERSION  what cuDriverGetVersion says (default 13000)
 *   FAKE_CUDA_INIT_RESULT     a CUresult for cuInit to return instead (e.g. 34: stub library)
 *   FAKE_CUDA_PEER            cuDeviceCanAccessPeer: 1 every pair (default), 0 none, "node":
 *                             pairs in the same half of the machine (fake_nvml's NUMA nodes) */
#include <stddef.h>

#include "fake_machine.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct {
  char bytes[16];
} CUuuid;

static fake_gpu g_gpus[FAKE_MAX_GPUS];
static int g_total;                  /* GPUs of the machine */
static int g_visible[FAKE_MAX_GPUS]; /* CUDA ordinal -> fake GPU */
static int g_count = -1;             /* -1: cuInit not called yet */

static int starts_with_ci(const char* s, const char* prefix, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char a = s[i], b = prefix[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
    if (a != b) return 0;
  }
  return 1;
}

/* The fake GPU an entry of CUDA_VISIBLE_DEVICES names, or -1. */
static int resolve(const char* entry, size_t len, int total) {
  char* end = NULL;
  char buf[128];
  if (len == 0 || len >= sizeof buf) return -1;
  memcpy(buf, entry, len);
  buf[len] = '\0';
  long index = strtol(buf, &end, 10);
  if (*end == '\0') return index >= 0 && index < total ? (int)index : -1;
  const char* want = buf;
  if (starts_with_ci(want, "GPU-", 4)) want += 4;
  int found = -1;
  for (int i = 0; i < total; ++i) {
    char uuid[64];
    fake_uuid_text(&g_gpus[i], uuid, sizeof uuid);
    if (strlen(want) <= strlen(uuid + 4) && starts_with_ci(uuid + 4, want, strlen(want))) {
      if (found >= 0) return -1;
      found = i;
    }
  }
  return found;
}

static int apply_visible_devices(int total) {
  const char* spec = getenv("CUDA_VISIBLE_DEVICES");
  if (!spec) {
    for (int i = 0; i < total; ++i) g_visible[i] = i;
    return total;
  }
  int n = 0;
  while (*spec && n < FAKE_MAX_GPUS) {
    const char* end = strchr(spec, ',');
    size_t len = end ? (size_t)(end - spec) : strlen(spec);
    int gpu = resolve(spec, len, total);
    for (int k = 0; k < n; ++k)
      if (g_visible[k] == gpu) gpu = -1;
    if (gpu < 0) break;
    g_visible[n++] = gpu;
    if (!end) break;
    spec = end + 1;
  }
  return n;
}

static const fake_gpu* gpu_of(CUdevice dev) {
  return g_count > 0 && dev >= 0 && dev < g_count ? &g_gpus[g_visible[dev]] : NULL;
}

FAKE_API CUresult cuDriverGetVersion(int* version) {
  if (!version) return 1;
  *version = fake_env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
  return 0;
}

FAKE_API CUresult cuInit(unsigned int flags) {
  (void)flags;
  int forced = fake_env_int("FAKE_CUDA_INIT_RESULT", 0);
  if (forced != 0) return forced;
  g_total = fake_machine(g_gpus);
  g_count = apply_visible_devices(g_total);
  return g_count > 0 ? 0 : 100; /* CUDA_ERROR_NO_DEVICE */
}

FAKE_API CUresult cuGetErrorName(CUresult error, const char** name) {
  if (!name) return 1;
  switch (error) {
    case 0:
      *name = "CUDA_SUCCESS";
      return 0;
    case 100:
      *name = "CUDA_ERROR_NO_DEVICE";
      return 0;
    case 999:
      *name = "CUDA_ERROR_UNKNOWN";
      return 0;
    default:
      *name = NULL;
      return 1;
  }
}

FAKE_API CUresult cuDeviceGetCount(int* count) {
  if (!count) return 1;
  if (g_count < 0) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
  *count = g_count;
  return 0;
}

FAKE_API CUresult cuDeviceGet(CUdevice* dev, int ordinal) {
  if (!dev) return 1;
  if (g_count < 0) return 3;
  if (ordinal < 0 || ordinal >= g_count) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *dev = ordinal;
  return 0;
}

FAKE_API CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  const fake_gpu* g = gpu_of(dev);
  if (!g) return 101;
  if (!name || len <= 0) return 1;
  snprintf(name, (size_t)len, "%s", g->name);
  return 0;
}

FAKE_API CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice dev) {
  const fake_gpu* g = gpu_of(dev);
  if (!g) return 101;
  if (!value) return 1;
  switch (attribute) {
    case 13:
      *value = 1980000;
      break; /* CLOCK_RATE, kHz */
    case 16:
      *value = 132;
      break; /* MULTIPROCESSOR_COUNT */
    case 33:
      *value = (int)g->bus;
      break; /* PCI_BUS_ID */
    case 34:
      *value = 0;
      break; /* PCI_DEVICE_ID */
    case 36:
      *value = 2619000;
      break; /* MEMORY_CLOCK_RATE, kHz */
    case 37:
      *value = 5120;
      break; /* GLOBAL_MEMORY_BUS_WIDTH */
    case 50:
      *value = 0;
      break; /* PCI_DOMAIN_ID */
    case 75:
      *value = 9;
      break; /* COMPUTE_CAPABILITY_MAJOR */
    case 76:
      *value = 0;
      break; /* COMPUTE_CAPABILITY_MINOR */
    default:
      *value = 0;
      break;
  }
  return 0;
}

FAKE_API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  const fake_gpu* g = gpu_of(dev);
  if (!g) return 101;
  if (!bytes) return 1;
  *bytes = (size_t)g->memory;
  return 0;
}

FAKE_API CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  const fake_gpu* g = gpu_of(dev);
  if (!g) return 101;
  if (!uuid) return 1;
  memcpy(uuid->bytes, g->uuid, sizeof uuid->bytes);
  return 0;
}

FAKE_API CUresult cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer) {
  if (!gpu_of(dev) || !gpu_of(peer)) return 101;
  if (!can) return 1;
  const char* mode = getenv("FAKE_CUDA_PEER");
  if (mode && strcmp(mode, "node") == 0) {
    int half = (g_total + 1) / 2;
    *can = dev != peer && (g_visible[dev] < half) == (g_visible[peer] < half);
  } else {
    *can = dev != peer && fake_env_int("FAKE_CUDA_PEER", 1) != 0;
  }
  return 0;
}
