/* The health side of the fake libnvidia-ml.so.1: error counters, clocks, links, processes and
 * XID events, scripted by a scenario file (FAKE_NVML_SCENARIO). The file is read again at every
 * nvmlInit_v2, so a test may append a line while a job runs: an XID "appears mid-run". Each XID
 * line is delivered once, by the next nvmlEventSetWait_v2. Lines ('#' starts a comment):
 *
 *   gpu I xid N                 a critical XID event on GPU I
 *   gpu I ecc dbe|sbe|dbe-aggregate|sbe-aggregate COUNT
 *   gpu I retired-pending       a page retirement waits for a reset
 *   gpu I remap pending|failed [UNCORRECTABLE_ROWS]
 *   gpu I clock hw-slowdown|hw-thermal|sw-thermal|hw-power-brake|sw-power-cap
 *   gpu I temperature C
 *   gpu I pcie GEN WIDTH        the link as trained (the most is Gen5 x16)
 *   gpu I pcie-replays COUNT
 *   gpu I nvlink L down         NVLink L of GPU I is down (GPUs have 18 links when this is used)
 *   gpu I process PID GB        another process holds that much memory
 *   fabric not-started|in-progress|completed|failed
 *
 * A malformed line makes nvmlInit_v2 fail with NVML_ERROR_UNKNOWN (999) after naming the file
 * and line on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "fake_machine.h"

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_UNKNOWN 999
#define MAX_XID_LINES 64
#define MAX_LINKS 18

typedef int nvmlReturn_t;
struct nvmlDevice_st {
  int index;
};
typedef struct nvmlDevice_st* nvmlDevice_t;

typedef struct {
  long long sbe, dbe, sbe_aggregate, dbe_aggregate;
  int retired_pending, remap_pending, remap_failed, remap_unc;
  unsigned long long clocks;
  int temperature;
  int pcie_gen, pcie_width;
  long long pcie_replays;
  int nvlink_down[MAX_LINKS];
  int uses_nvlink;
  unsigned pid;
  unsigned long long process_bytes;
} fake_health;

static fake_health g_health[FAKE_MAX_GPUS];
static int g_fabric = 0; /* 0: not an NVSwitch system; else nvmlGpuFabricState_t, 4 failed */
static int g_xid_gpu[MAX_XID_LINES], g_xid[MAX_XID_LINES], g_xid_line[MAX_XID_LINES];
static int g_xid_count = 0;
static int g_delivered[4096]; /* scenario lines already delivered as events */

/* Parses the scenario into the tables above; returns 0, or -1 after printing the problem. */
int fake_nvml_read_scenario(int gpu_count) {
  memset(g_health, 0, sizeof g_health);
  for (int i = 0; i < FAKE_MAX_GPUS; ++i) {
    g_health[i].temperature = 45;
    g_health[i].pcie_gen = 5;
    g_health[i].pcie_width = 16;
  }
  g_fabric = 0;
  g_xid_count = 0;
  const char* path = getenv("FAKE_NVML_SCENARIO");
  if (!path || !*path) return 0;
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "fake NVML scenario %s: cannot be read\n", path);
    return -1;
  }
  char line[256];
  int number = 0;
  while (fgets(line, sizeof line, f)) {
    ++number;
    char* hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char word[32] = "", what[32] = "", extra[32] = "";
    int gpu = -1;
    long long a = 0, b = 0;
    if (sscanf(line, " %31s", word) != 1) continue; /* blank */
    int ok = 0;
    if (strcmp(word, "fabric") == 0 && sscanf(line, " fabric %31s", what) == 1) {
      ok = 1;
      if (strcmp(what, "not-started") == 0)
        g_fabric = 1;
      else if (strcmp(what, "in-progress") == 0)
        g_fabric = 2;
      else if (strcmp(what, "completed") == 0)
        g_fabric = 3;
      else if (strcmp(what, "failed") == 0)
        g_fabric = 4;
      else
        ok = 0;
    } else if (strcmp(word, "gpu") == 0 && sscanf(line, " gpu %d %31s", &gpu, what) == 2 &&
               gpu >= 0 && gpu < gpu_count) {
      fake_health* h = &g_health[gpu];
      int n = sscanf(line, " gpu %*d %*s %31s %lld", extra, &b);
      if (strcmp(what, "xid") == 0 && sscanf(line, " gpu %*d xid %lld", &a) == 1 && a > 0 &&
          g_xid_count < MAX_XID_LINES) {
        g_xid_gpu[g_xid_count] = gpu;
        g_xid[g_xid_count] = (int)a;
        g_xid_line[g_xid_count] = number;
        ++g_xid_count;
        ok = 1;
      } else if (strcmp(what, "ecc") == 0 && n == 2 && b >= 0) {
        ok = 1;
        if (strcmp(extra, "dbe") == 0)
          h->dbe = b;
        else if (strcmp(extra, "sbe") == 0)
          h->sbe = b;
        else if (strcmp(extra, "dbe-aggregate") == 0)
          h->dbe_aggregate = b;
        else if (strcmp(extra, "sbe-aggregate") == 0)
          h->sbe_aggregate = b;
        else
          ok = 0;
      } else if (strcmp(what, "retired-pending") == 0) {
        h->retired_pending = ok = 1;
      } else if (strcmp(what, "remap") == 0 && n >= 1) {
        ok = 1;
        if (strcmp(extra, "pending") == 0)
          h->remap_pending = 1;
        else if (strcmp(extra, "failed") == 0)
          h->remap_failed = 1;
        else
          ok = 0;
        if (n == 2) h->remap_unc = (int)b;
      } else if (strcmp(what, "clock") == 0 && n >= 1) {
        static const char* names[] = {"sw-power-cap", "hw-slowdown", "sync-boost",
                                      "sw-thermal",   "hw-thermal",  "hw-power-brake"};
        for (int k = 0; k < 6; ++k)
          if (strcmp(extra, names[k]) == 0) {
            h->clocks |= 0x4ull << k;
            ok = 1;
          }
      } else if (strcmp(what, "temperature") == 0 &&
                 sscanf(line, " gpu %*d temperature %lld", &a) == 1) {
        h->temperature = (int)a;
        ok = 1;
      } else if (strcmp(what, "pcie") == 0 &&
                 sscanf(line, " gpu %*d pcie %lld %lld", &a, &b) == 2 && a >= 1 && a <= 5 &&
                 b >= 1 && b <= 16) {
        h->pcie_gen = (int)a;
        h->pcie_width = (int)b;
        ok = 1;
      } else if (strcmp(what, "pcie-replays") == 0 &&
                 sscanf(line, " gpu %*d pcie-replays %lld", &a) == 1) {
        h->pcie_replays = a;
        ok = 1;
      } else if (strcmp(what, "nvlink") == 0 &&
                 sscanf(line, " gpu %*d nvlink %lld %31s", &a, extra) == 2 && a >= 0 &&
                 a < MAX_LINKS && strcmp(extra, "down") == 0) {
        h->nvlink_down[a] = 1;
        ok = 1;
      } else if (strcmp(what, "process") == 0 &&
                 sscanf(line, " gpu %*d process %lld %lld", &a, &b) == 2 && a > 0) {
        h->pid = (unsigned)a;
        h->process_bytes = (unsigned long long)b * 1000000000ull;
        ok = 1;
      }
    }
    if (!ok) {
      fprintf(stderr, "fake NVML scenario %s:%d: cannot read '%s'\n", path, number, word);
      fclose(f);
      return -1;
    }
  }
  fclose(f);
  for (int i = 0; i < FAKE_MAX_GPUS; ++i)
    for (int l = 0; l < MAX_LINKS; ++l)
      if (g_health[i].nvlink_down[l]) g_health[i].uses_nvlink = 1;
  return 0;
}

static fake_health* health_of(nvmlDevice_t dev) {
  extern int fake_nvml_gpu_count(void);
  if (!dev || dev->index < 0 || dev->index >= fake_nvml_gpu_count()) return NULL;
  return &g_health[dev->index];
}

#define HEALTH_OR_FAIL(dev, out)   \
  fake_health* h = health_of(dev); \
  if (!h || !(out)) return NVML_ERROR_INVALID_ARGUMENT

FAKE_API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int type, int counter,
                                                  unsigned long long* count) {
  HEALTH_OR_FAIL(dev, count);
  if (counter == 0)
    *count = (unsigned long long)(type == 1 ? h->dbe : h->sbe);
  else
    *count =
        (unsigned long long)(type == 1 ? h->dbe + h->dbe_aggregate : h->sbe + h->sbe_aggregate);
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, int* current, int* pending) {
  HEALTH_OR_FAIL(dev, current);
  *current = 1;
  if (pending) *pending = 1;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, int* pending) {
  HEALTH_OR_FAIL(dev, pending);
  *pending = h->retired_pending;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned* corr, unsigned* unc,
                                                unsigned* pending, unsigned* failed) {
  HEALTH_OR_FAIL(dev, corr);
  *corr = 0;
  *unc = (unsigned)h->remap_unc;
  *pending = (unsigned)h->remap_pending;
  *failed = (unsigned)h->remap_failed;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev,
                                                             unsigned long long* reasons) {
  HEALTH_OR_FAIL(dev, reasons);
  *reasons = h->clocks;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned* t) {
  HEALTH_OR_FAIL(dev, t);
  if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
  *t = (unsigned)h->temperature;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t dev, int which, unsigned* t) {
  HEALTH_OR_FAIL(dev, t);
  *t = which == 0 ? 92u : 87u; /* shutdown, slowdown: an H100's */
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned* mw) {
  HEALTH_OR_FAIL(dev, mw);
  *mw = 250000;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned* mw) {
  HEALTH_OR_FAIL(dev, mw);
  *mw = 700000;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t dev, unsigned* v) {
  HEALTH_OR_FAIL(dev, v);
  *v = (unsigned)h->pcie_gen;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t dev, unsigned* v) {
  HEALTH_OR_FAIL(dev, v);
  *v = (unsigned)h->pcie_width;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t dev, unsigned* v) {
  HEALTH_OR_FAIL(dev, v);
  *v = 5;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t dev, unsigned* v) {
  HEALTH_OR_FAIL(dev, v);
  *v = 16;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t dev, unsigned* v) {
  HEALTH_OR_FAIL(dev, v);
  *v = (unsigned)h->pcie_replays;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, int* mode) {
  HEALTH_OR_FAIL(dev, mode);
  *mode = 1;
  return NVML_SUCCESS;
}

/* Health-only NVLinks: a scenario that sets a link down gives that GPU 18 links, the others
 * up. The topology's links (FAKE_NVML_NVLINKS) answer first, in fake_nvml.c. */
int fake_nvml_health_link(int gpu, unsigned link, int* active) {
  if (gpu < 0 || gpu >= FAKE_MAX_GPUS || !g_health[gpu].uses_nvlink || link >= MAX_LINKS) return 0;
  *active = !g_health[gpu].nvlink_down[link];
  return 1;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t dev, unsigned link, int counter,
                                                      unsigned long long* value) {
  HEALTH_OR_FAIL(dev, value);
  (void)link;
  (void)counter;
  *value = 0;
  return NVML_SUCCESS;
}

typedef struct {
  unsigned char cluster_uuid[16];
  nvmlReturn_t status;
  unsigned clique_id;
  unsigned char state;
} fake_fabric_info;

FAKE_API nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t dev, fake_fabric_info* info) {
  HEALTH_OR_FAIL(dev, info);
  if (g_fabric == 0) return NVML_ERROR_NOT_SUPPORTED;
  memset(info, 0, sizeof *info);
  info->state = (unsigned char)(g_fabric == 4 ? 3 : g_fabric);
  info->status = g_fabric == 4 ? NVML_ERROR_UNKNOWN : NVML_SUCCESS;
  return NVML_SUCCESS;
}

typedef struct {
  unsigned pid;
  unsigned long long used;
  unsigned gi, ci;
} fake_process;

FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned* count,
                                                              fake_process* infos) {
  HEALTH_OR_FAIL(dev, count);
  const unsigned n = h->pid ? 1u : 0u;
  if (*count < n) {
    *count = n;
    return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
  }
  *count = n;
  if (n) {
    infos[0].pid = h->pid;
    infos[0].used = h->process_bytes;
    infos[0].gi = infos[0].ci = 0xffffffffu;
  }
  return NVML_SUCCESS;
}

/* Events: one set; each scenario XID line is delivered once, by the next wait. */
struct nvmlEventSet_st {
  int registered;
};
static struct nvmlEventSet_st g_set;

typedef struct {
  nvmlDevice_t device;
  unsigned long long type, data;
  unsigned gi, ci;
} fake_event;

FAKE_API nvmlReturn_t nvmlEventSetCreate(struct nvmlEventSet_st** set) {
  if (!set) return NVML_ERROR_INVALID_ARGUMENT;
  g_set.registered = 0;
  *set = &g_set;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types,
                                               struct nvmlEventSet_st* set) {
  if (!health_of(dev) || set != &g_set || !(types & 0x8ull)) return NVML_ERROR_INVALID_ARGUMENT;
  ++set->registered;
  return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlEventSetWait_v2(struct nvmlEventSet_st* set, fake_event* data,
                                          unsigned timeout_ms) {
  extern nvmlDevice_t fake_nvml_handle(int index);
  if (set != &g_set || !data) return NVML_ERROR_INVALID_ARGUMENT;
  for (int k = 0; k < g_xid_count; ++k) {
    const int line = g_xid_line[k];
    if (line < 4096 && g_delivered[line]) continue;
    if (line < 4096) g_delivered[line] = 1;
    memset(data, 0, sizeof *data);
    data->device = fake_nvml_handle(g_xid_gpu[k]);
    data->type = 0x8ull;
    data->data = (unsigned long long)g_xid[k];
    return NVML_SUCCESS;
  }
  /* Nothing queued: wait as NVML would, a little (a test's watch interval is short). */
  const unsigned ms = timeout_ms < 2000 ? timeout_ms : 2000;
  const struct timespec pause = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  return NVML_ERROR_TIMEOUT;
}

FAKE_API nvmlReturn_t nvmlEventSetFree(struct nvmlEventSet_st* set) {
  return set == &g_set ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}
