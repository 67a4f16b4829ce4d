/* A fake libnvidia-ml.so.1 for the CUDA plugin's scenario tests: the NVML entry points nubo
 * uses, over the machine of fake_machine.h. Like the real NVML it lists every GPU
 * (CUDA_VISIBLE_DEVICES does not apply).
 *
 *   FAKE_NVML_INIT_RESULT     an nvmlReturn_t for nvmlInit_v2 to return instead (e.g. 9)
 *   FAKE_NVML_DRIVER_RELEASE  nvmlSystemGetDriverVersion (default "580.65.06")
 *   FAKE_NVML_NVLINKS         direct NVLinks, "0-1:18,2-3:4" (GPU a to GPU b: that many links)
 *   FAKE_NVML_NVSWITCH        links from every GPU to an NVSwitch (HGX style), e.g. 18
 *   FAKE_NVML_MIG             GPUs in MIG mode: "all" or indices, e.g. "0,2"
 *   FAKE_NVML_TOPOLOGY        common-ancestor level of GPUs on one NUMA node (default 20,
 *                             PXB); GPUs on different nodes (first half / second half) get 50
 *   FAKE_NVML_SCENARIO        a health scenario file (fake_nvml_health.c) */
#include "fake_machine.h"

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define MAX_LINKS 18

typedef int nvmlReturn_t;

struct nvmlDevice_st {
  int index;
};
typedef struct nvmlDevice_st* nvmlDevice_t;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
  int active;
  int to_switch;
  int remote; /* GPU index when !to_switch */
} fake_link;

static fake_gpu g_gpus[FAKE_MAX_GPUS];
static struct nvmlDevice_st g_handles[FAKE_MAX_GPUS];
static fake_link g_links[FAKE_MAX_GPUS][MAX_LINKS];
static int g_has_nvlink[FAKE_MAX_GPUS];
static int g_count = -1; /* -1: not initialised */

int fake_nvml_read_scenario(int gpu_count); /* fake_nvml_health.c */
int fake_nvml_health_link(int gpu, unsigned link, int* active);

int fake_nvml_gpu_count(void) {
  return g_count;
}
nvmlDevice_t fake_nvml_handle(int index) {
  return &g_handles[index];
}

static int add_link(int from, int to, int to_switch) {
  for (int l = 0; l < MAX_LINKS; ++l) {
    if (!g_links[from][l].active) {
      g_links[from][l].active = 1;
      g_links[from][l].to_switch = to_switch;
      g_links[from][l].remote = to;
      g_has_nvlink[from] = 1;
      return 1;
    }
  }
  return 0;
}

static void build_links(void) {
  memset(g_links, 0, sizeof g_links);
  memset(g_has_nvlink, 0, sizeof g_has_nvlink);
  const char* spec = getenv("FAKE_NVML_NVLINKS");
  while (spec && *spec) {
    int a = -1, b = -1, n = 0;
    if (sscanf(spec, "%d-%d:%d", &a, &b, &n) == 3 && a >= 0 && b >= 0 && a < g_count &&
        b < g_count && a != b) {
      for (int k = 0; k < n; ++k) {
        add_link(a, b, 0);
        add_link(b, a, 0);
      }
    }
    spec = strchr(spec, ',');
    if (spec) ++spec;
  }
  int to_switch = fake_env_int("FAKE_NVML_NVSWITCH", 0);
  for (int i = 0; i < g_count; ++i)
    for (int k = 0; k < to_switch; ++k) add_link(i, -1, 1);
}

static int in_mig_mode(int index) {
  const char* spec = getenv("FAKE_NVML_MIG");
  if (!spec) return 0;
  if (strcmp(spec, "all") == 0) return 1;
  while (*spec) {
    if (atoi(spec) == index) return 1;
    spec = strchr(spec, ',');
    if (!spec) break;
    ++spec;
  }
  return 0;
}

static int numa_of(int index) {
  return g_count > 1 && index >= (g_count + 1) / 2 ? 1 : 0;
}

static const fake_gpu* gpu_of(nvmlDevice_t dev) {
  if (g_count < 0 || !dev || dev < g_handles || dev >= g_handles + g_count) return NULL;
  return &g_gpus[dev->index];
}

static void fill_pci(nvmlPciInfo_t* pci, unsigned bus) {
  memset(pci, 0, sizeof *pci);
  pci->bus = bus;
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", bus);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", bus);
  pci->pciDeviceId = 0x233010de;
}

FAKE_API nvmlReturn_t nvmlInit_v2(void) {
  int forced = fake_env_int("FAKE_NVML_INIT_RESULT", 0);
  if (forced != 0) return forced;
  g_count = fake_machine(g_gpus);
  for (int i = 0; i < g_count; ++i) g_handles[i].index = i;
  build_links();
  if (fake_nvml_read_scenario(g_count) != 0) {
    g_count = -1;
    return 999; /* NVML_ERROR_UNKNOWN */
  }
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlShutdown(void) {
  if (g_count < 0) return NVML_ERROR_UNINITIALIZED;
  g_count = -1;
  return NVML_SUCCESS;
}

FAKE_API const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case 9:
      return "Driver Not Loaded";
    case 18:
      return "RM has detected an NVML/RM version mismatch.";
    default:
      return "Unknown Error";
  }
}

FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (g_count < 0) return NVML_ERROR_UNINITIALIZED;
  const char* release = getenv("FAKE_NVML_DRIVER_RELEASE");
  if (!release) release = "580.65.06";
  if (!version || strlen(release) >= length) return NVML_ERROR_INSUFFICIENT_SIZE;
  snprintf(version, length, "%s", release);
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (g_count < 0) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = (unsigned)g_count;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* dev) {
  if (g_count < 0) return NVML_ERROR_UNINITIALIZED;
  if (!dev || index >= (unsigned)g_count) return NVML_ERROR_INVALID_ARGUMENT;
  *dev = &g_handles[index];
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char* name, unsigned int length) {
  const fake_gpu* g = gpu_of(dev);
  if (!g || !name || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
  snprintf(name, length, "%s", g->name);
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char* uuid, unsigned int length) {
  const fake_gpu* g = gpu_of(dev);
  if (!g || !uuid || length < 41) return NVML_ERROR_INVALID_ARGUMENT;
  fake_uuid_text(g, uuid, length);
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t* pci) {
  const fake_gpu* g = gpu_of(dev);
  if (!g || !pci) return NVML_ERROR_INVALID_ARGUMENT;
  fill_pci(pci, g->bus);
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t* memory) {
  const fake_gpu* g = gpu_of(dev);
  if (!g || !memory) return NVML_ERROR_INVALID_ARGUMENT;
  memory->total = g->memory;
  memory->used = 512ull << 20;
  memory->free = g->memory - memory->used;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int* current,
                                           unsigned int* pending) {
  if (!gpu_of(dev) || !current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = (unsigned)in_mig_mode(dev->index);
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t dev, unsigned int* node) {
  if (!gpu_of(dev) || !node) return NVML_ERROR_INVALID_ARGUMENT;
  *node = (unsigned)numa_of(dev->index);
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                          int* level) {
  if (!gpu_of(a) || !gpu_of(b) || !level) return NVML_ERROR_INVALID_ARGUMENT;
  *level = numa_of(a->index) == numa_of(b->index) ? fake_env_int("FAKE_NVML_TOPOLOGY", 20) : 50;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link, int* active) {
  if (!gpu_of(dev) || !active || link >= MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g_has_nvlink[dev->index])
    return fake_nvml_health_link(dev->index, link, active) ? NVML_SUCCESS
                                                           : NVML_ERROR_NOT_SUPPORTED;
  *active = g_links[dev->index][link].active;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t dev, unsigned int link,
                                                          unsigned int* type) {
  if (!gpu_of(dev) || !type || link >= MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g_links[dev->index][link].active) return NVML_ERROR_NOT_SUPPORTED;
  *type = g_links[dev->index][link].to_switch ? 2u : 0u;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t dev, unsigned int link,
                                                          nvmlPciInfo_t* pci) {
  if (!gpu_of(dev) || !pci || link >= MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  const fake_link* l = &g_links[dev->index][link];
  if (!l->active) return NVML_ERROR_NOT_SUPPORTED;
  fill_pci(pci, l->to_switch ? 0xf0u : g_gpus[l->remote].bus);
  return NVML_SUCCESS;
}
