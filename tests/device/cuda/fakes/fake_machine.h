/* The machine that the fake libcuda.so.1 and the fake libnvidia-ml.so.1 both describe, read
 * from environment variables so that each CTest scenario sets up its own machine:
 *
 *   FAKE_CUDA_DEVICES     comma-separated device names, e.g. "NVIDIA H100 80GB HBM3,NVIDIA H100
 *                         80GB HBM3" (unset or empty: no device). GPU i sits at PCI bus
 *                         0x10*(i+1) and has the UUID GPU-fa4e0000-0000-0000-0000-0000000000<i>.
 *   FAKE_CUDA_MEMORY_MIB  memory per device (default 81559, an H100 80GB)
 *
 * Header-only on purpose: each fake is one shared library with no other dependency. */
#ifndef NUBO_TESTS_FAKE_MACHINE_H
#define NUBO_TESTS_FAKE_MACHINE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_API __attribute__((visibility("default")))
#define FAKE_MAX_GPUS 16

typedef struct fake_gpu {
  char name[96];
  unsigned char uuid[16];
  unsigned bus;
  unsigned long long memory;
} fake_gpu;

static inline int fake_env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

static inline void fake_uuid_text(const fake_gpu* g, char* buf, size_t size) {
  const unsigned char* b = g->uuid;
  snprintf(buf, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
           b[14], b[15]);
}

/* Fills gpus[] from FAKE_CUDA_DEVICES; returns how many. */
static inline int fake_machine(fake_gpu* gpus) {
  const char* spec = getenv("FAKE_CUDA_DEVICES");
  unsigned long long mib = (unsigned long long)fake_env_int("FAKE_CUDA_MEMORY_MIB", 81559);
  int n = 0;
  while (spec && *spec && n < FAKE_MAX_GPUS) {
    const char* end = strchr(spec, ',');
    size_t len = end ? (size_t)(end - spec) : strlen(spec);
    fake_gpu* g = &gpus[n];
    memset(g, 0, sizeof *g);
    if (len >= sizeof g->name) len = sizeof g->name - 1;
    memcpy(g->name, spec, len);
    g->uuid[0] = 0xfa;
    g->uuid[1] = 0x4e;
    g->uuid[15] = (unsigned char)n;
    g->bus = 0x10u * (unsigned)(n + 1);
    g->memory = mib << 20;
    ++n;
    if (!end) break;
    spec = end + 1;
  }
  return n;
}

#endif
