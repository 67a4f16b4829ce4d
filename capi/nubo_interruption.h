/*
 * nubo_interruption.h: spot interruption notices through the C ABI (docs/train.md, "Spot
 * interruptions"). Included by nubo.h; the conventions are nubo.h's.
 *
 * A watcher polls the instance metadata service of the cloud it runs on (AWS IMDSv2
 * spot/instance-action, GCP instance/preempted, Azure Scheduled Events; NUBO_METADATA_URL
 * names another service, such as a test's) and calls back once when the machine is about to be
 * taken away, before the SIGTERM. It is off when no service answers within 100 ms at start.
 * A trainer's job is then to checkpoint and stop: nubo_trainer_request_stop.
 */
#ifndef NUBO_INTERRUPTION_H
#define NUBO_INTERRUPTION_H

#include "nubo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the cloud said, valid during the callback (C++: nubo::InterruptionNotice). */
typedef struct nubo_interruption_notice {
  uint32_t struct_size; /* this library's sizeof: read only the fields it covers */
  const char* cloud;    /* "aws", "gcp" or "azure" */
  const char* action;   /* "terminate", "stop", "preempt", ... */
  const char* detail;   /* the provider's own words, for a log */
  double seconds_left;  /* until the machine goes, when the provider says; < 0: none */
} nubo_interruption_notice;

/* Called once, from the watcher's own thread. */
typedef void (*nubo_interruption_callback)(const nubo_interruption_notice* notice, void* user);

typedef struct nubo_interruption_watcher nubo_interruption_watcher; /* nubo_..._free */

/* Probes the metadata service (at most 100 ms), then polls it every poll_seconds (> 0; 2 is
   the usual) until freed. on_notice is required. */
NUBO_C_API nubo_status nubo_interruption_watcher_create(nubo_interruption_callback on_notice,
                                                        void* user, double poll_seconds,
                                                        nubo_interruption_watcher** out);
/* Stops polling and waits for the watcher's thread; accepts NULL. */
NUBO_C_API void nubo_interruption_watcher_free(nubo_interruption_watcher* watcher);
/* The cloud found ("aws", "gcp", "azure"), or "" when the watcher is off, NUL-terminated, with
   the needed-size protocol of nubo_device_report_json. */
NUBO_C_API nubo_status nubo_interruption_watcher_cloud(const nubo_interruption_watcher* watcher,
                                                       char* buf, size_t capacity, size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_INTERRUPTION_H */
