/*
 * nubo_health.h: GPU health and the preflight through the C ABI (docs/preflight.md). Included by
 * nubo.h; the conventions are nubo.h's.
 *
 * nubo_device_health reads what NVML and the kernel log say of every GPU (XID, ECC, remapped
 * rows, throttling, PCIe, NVLink, Fabric Manager, processes); nubo_device_preflight measures each
 * GPU, each pair and the host against what their models should do. Both give a check: its
 * verdict, the exit status nubo-smi would give, and the whole report as JSON
 * (docs/health.schema.json, docs/preflight.schema.json).
 */
#ifndef NUBO_HEALTH_H
#define NUBO_HEALTH_H

#include "nubo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The result of a health report or a preflight. */
typedef struct nubo_device_check nubo_device_check;

/* Verdicts: health's ok, warn, fail and the preflight's healthy, degraded, unusable. */
#define NUBO_CHECK_HEALTHY 0
#define NUBO_CHECK_DEGRADED 1
#define NUBO_CHECK_UNUSABLE 2

/* Options of nubo_device_health (C++: nubo::device::HealthOptions). */
typedef struct nubo_device_health_options {
  uint32_t struct_size;
  double wait_seconds;         /* how long to wait for new XID events; 0 (default): none */
  const char* xid_policy_file; /* overrides of the XID table ("79 fail drain-node"); NULL: none */
  const char* kernel_log_file; /* a saved dmesg to read XIDs from; NULL: /dev/kmsg */
} nubo_device_health_options;

/* Options of nubo_device_preflight (C++: nubo::device::PreflightOptions). */
typedef struct nubo_device_preflight_options {
  uint32_t struct_size;
  int quick;             /* nonzero: a budget of about 10 s instead of 60 */
  double budget_seconds; /* 0 (default): 60 s, or 10 s with quick */
  double threshold;      /* below this fraction of the expected figure: degraded (0.8) */
  int host;              /* nonzero (default): measure the host's GEMM and memory too */
} nubo_device_preflight_options;

NUBO_C_API nubo_status nubo_device_health_options_init(nubo_device_health_options* options,
                                                       size_t struct_size);
NUBO_C_API nubo_status nubo_device_preflight_options_init(nubo_device_preflight_options* options,
                                                          size_t struct_size);

/*
 * The health of every GPU of the machine, matched to the report's devices. options may be NULL.
 * A machine without NVML is no error: the check says so. Errors: NUBO_ERR_INVALID_ARGUMENT (a
 * bad option or policy file, naming the line).
 */
NUBO_C_API nubo_status nubo_device_health(const nubo_device_report* report,
                                          const nubo_device_health_options* options,
                                          nubo_device_check** out);
/*
 * Measures the devices[0..device_count) of the report (device_count 0: every GPU) against their
 * models, within the options' time budget. A device that fails is an unusable verdict, not an
 * error. Errors: NUBO_ERR_INVALID_ARGUMENT (a bad index or option), NUBO_ERR_CANCELLED.
 */
NUBO_C_API nubo_status nubo_device_preflight(const nubo_device_report* report, const int* devices,
                                             size_t device_count,
                                             const nubo_device_preflight_options* options,
                                             nubo_device_check** out);
/* NUBO_CHECK_HEALTHY, _DEGRADED or _UNUSABLE; -1 for NULL. */
NUBO_C_API int nubo_device_check_verdict(const nubo_device_check* check);
/* nubo-smi's exit status for it: 0 healthy, 4 degraded, 5 unusable; -1 for NULL. */
NUBO_C_API int nubo_device_check_exit_status(const nubo_device_check* check);
/* The report as JSON, NUL-terminated, into buf of capacity bytes (nubo.h's text protocol). */
NUBO_C_API nubo_status nubo_device_check_json(const nubo_device_check* check, char* buf,
                                              size_t capacity, size_t* needed);
NUBO_C_API void nubo_device_check_free(nubo_device_check* check);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_HEALTH_H */
