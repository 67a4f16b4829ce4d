/*
 * The C ABI exercised from C11 (not C++): what a C program sees of libnubo_c.so. Run by CTest
 * with NUBO_SIM_DEVICES=2xA100-SXM4-80GB in the environment; exits nonzero when a check fails.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "nubo.h"

static int g_passed;
static int g_failed;

static int check(int ok, const char* what, const char* file, int line) {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    fprintf(stderr, "%s:%d: FAILED: %s\n  last error: %s\n", file, line, what, nubo_last_error());
  }
  return ok;
}
#define CHECK(cond) check((cond) != 0, #cond, __FILE__, __LINE__)

/* A status check that prints what came back instead. */
static int check_status(nubo_status got, nubo_status want, const char* what, const char* file,
                        int line) {
  char text[512];
  snprintf(text, sizeof text, "%s returned %d (%s), expected %d (%s)", what, (int)got,
           nubo_status_string(got), (int)want, nubo_status_string(want));
  return check(got == want, text, file, line);
}
#define CHECK_STATUS(expr, want) check_status((expr), (want), #expr, __FILE__, __LINE__)

#define CHECK_ERROR_MENTIONS(text) CHECK(strstr(nubo_last_error(), (text)) != NULL)

static const char* const kTwoA100 = "2xA100-SXM4-80GB";

/* A report of the two simulated A100s, without probing CUDA so that it is the same anywhere. */
static nubo_device_report* discover_two_a100(void) {
  nubo_device_discover_options options;
  nubo_device_report* report = NULL;
  CHECK_STATUS(nubo_device_discover_options_init(&options, sizeof options), NUBO_OK);
  options.sim_devices = kTwoA100;
  options.probe_cuda = 0;
  CHECK_STATUS(nubo_device_discover(&options, &report), NUBO_OK);
  CHECK(report != NULL);
  return report;
}

static void test_versions(void) {
  char expected[32];
  snprintf(expected, sizeof expected, "%d.%d.%d", NUBO_VERSION_MAJOR, NUBO_VERSION_MINOR,
           NUBO_VERSION_PATCH);
  CHECK(strcmp(nubo_version(), expected) == 0);
  CHECK(strcmp(nubo_version(), "0.1.0") == 0);
  CHECK(nubo_abi_version() == NUBO_ABI_VERSION);
}

static void test_environment_check(void) {
  CHECK(nubo_check_environment() == NUBO_OK);
  setenv("NUBO_CUDA", "2", 1);
  CHECK(nubo_check_environment() == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "NUBO_CUDA='2' is not valid") != NULL);
  unsetenv("NUBO_CUDA");
  CHECK(nubo_check_environment() == NUBO_OK);
}

static void test_status_strings(void) {
  int s, t;
  CHECK(strcmp(nubo_status_string(NUBO_OK), "ok") == 0);
  CHECK(strcmp(nubo_status_string(NUBO_ERR_INVALID_ARGUMENT), "invalid argument") == 0);
  CHECK(strcmp(nubo_status_string(NUBO_ERR_OUT_OF_MEMORY), "out of memory") == 0);
  for (s = NUBO_OK; s <= NUBO_ERR_INTERNAL; ++s) {
    const char* text = nubo_status_string((nubo_status)s);
    CHECK(text != NULL && text[0] != '\0');
    for (t = NUBO_OK; t < s; ++t) CHECK(strcmp(text, nubo_status_string((nubo_status)t)) != 0);
  }
  CHECK(strcmp(nubo_status_string((nubo_status)999), "unknown status") == 0);
  CHECK(strcmp(nubo_status_string((nubo_status)-1), "unknown status") == 0);
}

static void test_last_error_starts_empty(void) {
  CHECK(nubo_last_error() != NULL);
  CHECK(strcmp(nubo_last_error(), "") == 0);
}

static void test_options_init(void) {
  struct {
    nubo_device_discover_options options;
    unsigned char canary[16];
  } s;
  memset(&s, 0xAB, sizeof s);
  CHECK_STATUS(nubo_device_discover_options_init(&s.options, sizeof s.options), NUBO_OK);
  CHECK(s.options.struct_size == sizeof s.options);
  CHECK(s.options.sim_devices == NULL && s.options.sim_topology_file == NULL);
  CHECK(s.options.cuda_plugin_path == NULL);
  CHECK(s.options.probe_cuda != 0);
  CHECK(s.canary[0] == 0xAB && s.canary[15] == 0xAB);

  /* An older caller's shorter struct: only its bytes are written. */
  memset(&s, 0xAB, sizeof s);
  CHECK_STATUS(nubo_device_discover_options_init(
                   &s.options, offsetof(nubo_device_discover_options, probe_cuda)),
               NUBO_OK);
  CHECK(s.options.struct_size == offsetof(nubo_device_discover_options, probe_cuda));
  CHECK(s.options.sim_devices == NULL);
  CHECK(((const unsigned char*)&s.options)[offsetof(nubo_device_discover_options, probe_cuda)] ==
        0xAB);

  CHECK_STATUS(nubo_device_discover_options_init(NULL, sizeof s.options),
               NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("options is NULL");
  CHECK_STATUS(nubo_device_discover_options_init(&s.options, 0), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("struct_size");

  {
    nubo_device_select_request request;
    CHECK_STATUS(nubo_device_select_request_init(&request, sizeof request), NUBO_OK);
    CHECK(request.struct_size == sizeof request && request.count == 1);
    CHECK(request.min_memory == 0 && request.min_cc_major == 0 && request.min_cc_minor == 0);
    CHECK_STATUS(nubo_device_select_request_init(NULL, sizeof request), NUBO_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("request is NULL");
  }
}

static void test_discover_with_options(void) {
  nubo_device_report* report = discover_two_a100();
  CHECK(nubo_device_report_device_count(report) == 2);
  nubo_device_report_free(report);
}

static void test_discover_from_environment(void) {
  const char* env = getenv("NUBO_SIM_DEVICES");
  nubo_device_discover_options options;
  nubo_device_report* report = NULL;
  if (!CHECK(env != NULL && strcmp(env, kTwoA100) == 0)) {
    fprintf(stderr, "  run this test through ctest, which sets NUBO_SIM_DEVICES=%s\n", kTwoA100);
    return;
  }
  CHECK_STATUS(nubo_device_discover_options_init(&options, sizeof options), NUBO_OK);
  options.probe_cuda = 0;
  CHECK_STATUS(nubo_device_discover(&options, &report), NUBO_OK);
  CHECK(nubo_device_report_device_count(report) == 2);
  nubo_device_report_free(report);

  /* NULL options are the defaults, which read the variable too. */
  report = NULL;
  CHECK_STATUS(nubo_device_discover(NULL, &report), NUBO_OK);
  CHECK(nubo_device_report_device_count(report) == 2);
  nubo_device_report_free(report);
}

static void test_device_info(nubo_device_report* report) {
  size_t i;
  for (i = 0; i < 2; ++i) {
    nubo_device_info d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    if (!CHECK_STATUS(nubo_device_report_device(report, i, &d), NUBO_OK)) continue;
    CHECK(d.struct_size == sizeof d);
    CHECK(d.backend == NUBO_BACKEND_SIM);
    CHECK(d.index == (int)i);
    CHECK(d.name != NULL && strstr(d.name, "A100") != NULL);
    CHECK(d.model != NULL && strcmp(d.model, "A100-SXM4-80GB") == 0);
    CHECK(d.uuid != NULL && strncmp(d.uuid, "GPU-", 4) == 0);
    CHECK(d.pci_bus_id != NULL && strlen(d.pci_bus_id) > 0);
    CHECK(d.cc_major == 8 && d.cc_minor == 0);
    CHECK(d.multiprocessors == 108);
    CHECK(d.clock_mhz > 1000);
    CHECK(d.memory_total >= 80000000000ull && d.memory_total <= 90000000000ull);
    CHECK(d.memory_free <= d.memory_total);
    CHECK(d.memory_bandwidth_gbs > 1500.0);
    CHECK(d.peak_tflops_fp32 > 19.0 && d.peak_tflops_fp32 < 20.0);
    CHECK(d.peak_tflops_tf32 > d.peak_tflops_fp32);
    CHECK(d.peak_tflops_fp16 > d.peak_tflops_tf32);
    CHECK(d.peak_tflops_bf16 > d.peak_tflops_tf32);
    CHECK(d.peak_source != NULL && strcmp(d.peak_source, "catalog") == 0);
    CHECK(d.numa_node >= -1);
    CHECK(d.mig_enabled == 0);
  }
  {
    /* Two calls give the same strings: they belong to the report, not to the call. */
    nubo_device_info a, b;
    a.struct_size = b.struct_size = sizeof a;
    CHECK_STATUS(nubo_device_report_device(report, 0, &a), NUBO_OK);
    CHECK_STATUS(nubo_device_report_device(report, 0, &b), NUBO_OK);
    CHECK(a.uuid == b.uuid);
    CHECK_STATUS(nubo_device_report_device(report, 1, &b), NUBO_OK);
    CHECK(strcmp(a.uuid, b.uuid) != 0);
  }
}

static void test_links(nubo_device_report* report) {
  nubo_link_info link;
  link.struct_size = sizeof link;
  CHECK_STATUS(nubo_device_report_link(report, 0, 1, &link), NUBO_OK);
  CHECK(link.kind == NUBO_LINK_NVLINK);
  CHECK(link.nvlinks == 12);
  CHECK(link.peer_access == 1);
  CHECK(link.name != NULL && strcmp(link.name, "NV12") == 0);
  CHECK_STATUS(nubo_device_report_link(report, 1, 0, &link), NUBO_OK);
  CHECK(link.kind == NUBO_LINK_NVLINK && strcmp(link.name, "NV12") == 0);
  CHECK_STATUS(nubo_device_report_link(report, 1, 1, &link), NUBO_OK);
  CHECK(link.kind == NUBO_LINK_SELF && strcmp(link.name, "X") == 0);
}

static void test_host(nubo_device_report* report) {
  nubo_host_info host;
  nubo_driver_info driver;
  memset(&host, 0, sizeof host);
  host.struct_size = sizeof host;
  CHECK_STATUS(nubo_device_report_host(report, &host), NUBO_OK);
  CHECK(host.model != NULL);
  CHECK(host.logical_cores >= 1);
  CHECK(host.physical_cores >= 1 && host.physical_cores <= host.logical_cores);
  CHECK(host.sockets >= 1);
  CHECK(host.memory_total > 0 && host.memory_available <= host.memory_total);
  CHECK(host.blas != NULL && host.blas[0] != '\0');

  memset(&driver, 0, sizeof driver);
  driver.struct_size = sizeof driver;
  CHECK_STATUS(nubo_device_report_driver(report, &driver), NUBO_OK);
  CHECK(driver.driver_release != NULL);
  CHECK(driver.driver_version >= 0 && driver.runtime_version >= 0);
}

static int find_diagnosis(nubo_device_report* report, const char* code, nubo_diagnosis_info* out) {
  size_t i;
  for (i = 0; i < nubo_device_report_diagnosis_count(report); ++i) {
    out->struct_size = sizeof *out;
    if (nubo_device_report_diagnosis(report, i, out) == NUBO_OK && strcmp(out->code, code) == 0)
      return 1;
  }
  return 0;
}

static void test_diagnoses(nubo_device_report* report) {
  nubo_diagnosis_info d;
  size_t i, n = nubo_device_report_diagnosis_count(report);
  CHECK(n >= 1);
  for (i = 0; i < n; ++i) {
    d.struct_size = sizeof d;
    CHECK_STATUS(nubo_device_report_diagnosis(report, i, &d), NUBO_OK);
    CHECK(d.code != NULL && d.code[0] != '\0');
    CHECK(d.message != NULL && d.message[0] != '\0');
    CHECK(d.advice != NULL);
    CHECK(d.severity >= NUBO_SEVERITY_INFO && d.severity <= NUBO_SEVERITY_ERROR);
  }
  /* The simulated devices say so themselves. */
  CHECK(find_diagnosis(report, "sim-devices", &d) && d.severity == NUBO_SEVERITY_INFO);

  {
    /* A plugin that is not there is a diagnosis with advice, never an error. */
    nubo_device_discover_options options;
    nubo_device_report* probed = NULL;
    nubo_device_discover_options_init(&options, sizeof options);
    options.sim_devices = kTwoA100;
    options.cuda_plugin_path = "/nonexistent/libnubo_cuda.so";
    CHECK_STATUS(nubo_device_discover(&options, &probed), NUBO_OK);
    CHECK(nubo_device_report_diagnosis_count(probed) > n);
    for (i = 0; i < nubo_device_report_diagnosis_count(probed); ++i) {
      d.struct_size = sizeof d;
      nubo_device_report_diagnosis(probed, i, &d);
      if (strcmp(d.code, "sim-devices") != 0) break;
    }
    CHECK(i < nubo_device_report_diagnosis_count(probed));
    CHECK(d.severity != NUBO_SEVERITY_INFO && d.advice[0] != '\0');
    nubo_device_report_free(probed);
  }
}

static void test_json(nubo_device_report* report) {
  size_t needed = 0, again = 0;
  char* buf;
  CHECK_STATUS(nubo_device_report_json(report, NULL, 0, &needed), NUBO_ERR_INVALID_ARGUMENT);
  CHECK(needed > 2);
  CHECK_ERROR_MENTIONS("needs");
  buf = (char*)malloc(needed);
  if (!CHECK(buf != NULL)) return;

  /* One byte short: an error, *needed again, and an empty string rather than a torn document. */
  memset(buf, 'x', needed);
  CHECK_STATUS(nubo_device_report_json(report, buf, needed - 1, &again), NUBO_ERR_INVALID_ARGUMENT);
  CHECK(again == needed);
  CHECK(buf[0] == '\0' && buf[needed - 1] == 'x');
  CHECK_ERROR_MENTIONS("too small");

  CHECK_STATUS(nubo_device_report_json(report, buf, needed, &again), NUBO_OK);
  CHECK(again == needed);
  CHECK(strlen(buf) == needed - 1);
  CHECK(buf[0] == '{' && buf[needed - 2] == '}');
  CHECK(strstr(buf, "A100-SXM4-80GB") != NULL);
  CHECK(strstr(buf, "NV12") != NULL);
  CHECK_STATUS(nubo_device_report_json(report, buf, needed, NULL), NUBO_OK);
  free(buf);
}

static void test_select(nubo_device_report* report) {
  nubo_device_select_request request;
  size_t indices[4] = {99, 99, 99, 99};
  size_t count = 99;

  nubo_device_select_request_init(&request, sizeof request);
  request.count = 2;
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 4, &count), NUBO_OK);
  CHECK(count == 2 && indices[0] == 0 && indices[1] == 1 && indices[2] == 99);

  /* NULL request: the defaults, one device. */
  CHECK_STATUS(nubo_device_report_select(report, NULL, indices, 4, &count), NUBO_OK);
  CHECK(count == 1 && indices[0] < 2);

  request.count = 0; /* every device that qualifies */
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 4, &count), NUBO_OK);
  CHECK(count == 2);

  request.count = 2; /* too small a buffer says how big it must be */
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 1, &count),
               NUBO_ERR_INVALID_ARGUMENT);
  CHECK(count == 2);
  CHECK_ERROR_MENTIONS("capacity 1");

  request.count = 3;
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 4, &count),
               NUBO_ERR_UNAVAILABLE);
  CHECK(count == 0);
  CHECK(nubo_last_error()[0] != '\0');

  request.count = 1;
  request.min_memory = (uint64_t)200 << 30; /* 200 GiB: no A100 has it */
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 4, &count),
               NUBO_ERR_UNAVAILABLE);

  request.min_memory = 0;
  request.min_cc_major = 9; /* Hopper or newer */
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 4, &count),
               NUBO_ERR_UNAVAILABLE);

  request.min_cc_major = 0;
  request.count = -1;
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 4, &count),
               NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("request->count");

  request.count = 1;
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 4, NULL),
               NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("count is NULL");
  CHECK_STATUS(nubo_device_report_select(report, &request, NULL, 4, &count),
               NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("indices is NULL");
  request.struct_size = 0;
  CHECK_STATUS(nubo_device_report_select(report, &request, indices, 4, &count),
               NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("request->struct_size is 0");
}

static void test_bad_inputs(nubo_device_report* report) {
  nubo_device_info d;
  nubo_link_info link;
  nubo_host_info host;
  nubo_diagnosis_info diag;
  nubo_device_discover_options options;
  nubo_device_report* out =
      (nubo_device_report*)&options; /* not NULL: a failed discover must clear it */
  size_t needed;

  CHECK_STATUS(nubo_device_discover(NULL, NULL), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("nubo_device_discover: out is NULL");

  nubo_device_discover_options_init(&options, sizeof options);
  options.sim_devices = "3xNoSuchGPU";
  CHECK_STATUS(nubo_device_discover(&options, &out), NUBO_ERR_INVALID_ARGUMENT);
  CHECK(out == NULL);
  CHECK_ERROR_MENTIONS("NoSuchGPU");
  CHECK_ERROR_MENTIONS("A100-SXM4-80GB"); /* the message lists the known models */

  options.sim_devices = "2xA100-SXM4-80GB,,";
  CHECK_STATUS(nubo_device_discover(&options, &out), NUBO_ERR_INVALID_ARGUMENT);
  CHECK(out == NULL);

  options.sim_devices = kTwoA100;
  options.struct_size = 0;
  CHECK_STATUS(nubo_device_discover(&options, &out), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("options->struct_size is 0");

  d.struct_size = sizeof d;
  CHECK_STATUS(nubo_device_report_device(NULL, 0, &d), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("report is NULL");
  CHECK_STATUS(nubo_device_report_device(report, 0, NULL), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("nubo_device_report_device: out is NULL");
  CHECK_STATUS(nubo_device_report_device(report, 2, &d), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("index 2 is out of range");
  CHECK_STATUS(nubo_device_report_device(report, (size_t)-1, &d), NUBO_ERR_INVALID_ARGUMENT);
  d.struct_size = 0;
  CHECK_STATUS(nubo_device_report_device(report, 0, &d), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("out->struct_size is 0");
  d.struct_size = 3;
  CHECK_STATUS(nubo_device_report_device(report, 0, &d), NUBO_ERR_INVALID_ARGUMENT);

  link.struct_size = sizeof link;
  CHECK_STATUS(nubo_device_report_link(report, 0, 5, &link), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("j 5 is out of range");
  CHECK_STATUS(nubo_device_report_link(report, 7, 0, &link), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("i 7 is out of range");
  CHECK_STATUS(nubo_device_report_link(NULL, 0, 0, &link), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(nubo_device_report_link(report, 0, 0, NULL), NUBO_ERR_INVALID_ARGUMENT);

  CHECK_STATUS(nubo_device_report_host(report, NULL), NUBO_ERR_INVALID_ARGUMENT);
  host.struct_size = 0;
  CHECK_STATUS(nubo_device_report_host(report, &host), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(nubo_device_report_driver(NULL, NULL), NUBO_ERR_INVALID_ARGUMENT);

  diag.struct_size = sizeof diag;
  CHECK_STATUS(nubo_device_report_diagnosis(report, 1000, &diag), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("index 1000 is out of range");

  CHECK_STATUS(nubo_device_report_json(NULL, NULL, 0, &needed), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("report is NULL");

  CHECK(nubo_device_report_device_count(NULL) == 0);
  CHECK(nubo_device_report_diagnosis_count(NULL) == 0);
  nubo_device_report_free(NULL); /* accepted, does nothing */
  CHECK(1);
}

/* A caller compiled against an older nubo.h passes a shorter struct_size: nothing past it is
   written. A newer caller's longer struct gets what this library knows, and no more. */
static void test_nics(nubo_device_report* report) {
  const size_t n = nubo_device_report_nic_count(report);
  nubo_nic_info nic = {.struct_size = sizeof nic};
  nubo_link_info link = {.struct_size = sizeof link};
  size_t i;
  for (i = 0; i < n; ++i) {
    CHECK_STATUS(nubo_device_report_nic(report, i, &nic), NUBO_OK);
    CHECK(nic.name != NULL && nic.name[0] != '\0' && nic.kind != NULL);
    /* A simulated GPU is nowhere in the PCIe tree. */
    CHECK_STATUS(nubo_device_report_gpu_nic(report, 0, i, &link), NUBO_OK);
    CHECK(link.kind == NUBO_LINK_UNKNOWN && strcmp(link.name, "?") == 0);
  }
  CHECK_STATUS(nubo_device_report_nic(report, n, &nic), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("out of range");
  CHECK_STATUS(nubo_device_report_gpu_nic(report, 0, n, &link), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(nubo_device_report_gpu_nic(report, 99, 0, &link), NUBO_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(nubo_device_report_nic(NULL, 0, &nic), NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_device_report_preferred_nic(report, 0) == -1);
  CHECK(nubo_device_report_preferred_nic(report, 99) == -1);
  CHECK(nubo_device_report_preferred_nic(NULL, 0) == -1);
  CHECK(nubo_device_report_nic_count(NULL) == 0);
}

static char* check_json(const nubo_device_check* result) {
  size_t needed = 0;
  char* buf;
  CHECK_STATUS(nubo_device_check_json(result, NULL, 0, &needed), NUBO_ERR_INVALID_ARGUMENT);
  buf = (char*)malloc(needed ? needed : 1);
  if (buf != NULL) CHECK_STATUS(nubo_device_check_json(result, buf, needed, NULL), NUBO_OK);
  return buf;
}

static void test_preflight_and_health(nubo_device_report* report) {
  nubo_device_preflight_options options;
  nubo_device_health_options health_options;
  nubo_device_check* result = NULL;
  const int both[] = {0, 1}, missing[] = {7};
  char* json;
  CHECK_STATUS(nubo_device_preflight_options_init(&options, sizeof options), NUBO_OK);
  CHECK(options.threshold == 0.8 && options.host == 1 && options.quick == 0);
  options.budget_seconds = 1;
  options.host = 0;
  CHECK_STATUS(nubo_device_preflight(report, both, 2, &options, &result), NUBO_OK);
  CHECK(nubo_device_check_verdict(result) == NUBO_CHECK_HEALTHY);
  CHECK(nubo_device_check_exit_status(result) == 0);
  json = check_json(result);
  CHECK(json != NULL && strstr(json, "\"gemm-bf16\"") != NULL && strstr(json, "peer-to-peer"));
  free(json);
  nubo_device_check_free(result);

  CHECK_STATUS(nubo_device_preflight(report, missing, 1, &options, &result),
               NUBO_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("there is no GPU 7");
  CHECK(result == NULL);
  CHECK_STATUS(nubo_device_preflight(report, NULL, 1, &options, &result),
               NUBO_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(nubo_device_preflight(NULL, NULL, 0, NULL, &result), NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_device_check_verdict(NULL) == -1);
  nubo_device_check_free(NULL);

  CHECK_STATUS(nubo_device_health_options_init(&health_options, sizeof health_options), NUBO_OK);
  health_options.kernel_log_file = "/dev/null";
  CHECK_STATUS(nubo_device_health(report, &health_options, &result), NUBO_OK);
  json = check_json(result);
  CHECK(json != NULL && strstr(json, "\"source\"") != NULL);
  free(json);
  nubo_device_check_free(result);
  health_options.xid_policy_file = "/no/such/policy";
  CHECK_STATUS(nubo_device_health(report, &health_options, &result), NUBO_ERR_NOT_FOUND);
  CHECK_ERROR_MENTIONS("/no/such/policy");
}

static void test_struct_size_compatibility(nubo_device_report* report) {
  const size_t old_size = offsetof(nubo_device_info, cc_major);
  size_t k;
  int untouched = 1;
  struct {
    nubo_device_info info;
    unsigned char after[32];
  } s;
  memset(&s, 0xCD, sizeof s);
  s.info.struct_size = (uint32_t)old_size;
  CHECK_STATUS(nubo_device_report_device(report, 1, &s.info), NUBO_OK);
  CHECK(s.info.struct_size == old_size);
  CHECK(s.info.index == 1 && strcmp(s.info.model, "A100-SXM4-80GB") == 0);
  for (k = old_size; k < sizeof s; ++k) untouched &= ((const unsigned char*)&s)[k] == 0xCD;
  CHECK(untouched);

  /* A newer caller: struct_size covers more than nubo_device_info; the rest stays as it was. */
  memset(&s, 0xCD, sizeof s);
  s.info.struct_size = (uint32_t)sizeof s;
  CHECK_STATUS(nubo_device_report_device(report, 0, &s.info), NUBO_OK);
  CHECK(s.info.struct_size == sizeof s && s.info.mig_enabled == 0);
  CHECK(s.after[0] == 0xCD && s.after[31] == 0xCD);

  {
    /* An older options struct ends before sim_devices: the field is not read, so the garbage in
       it does not matter, and the default (the NUBO_SIM_DEVICES variable) applies. */
    nubo_device_discover_options options;
    nubo_device_report* r = NULL;
    nubo_device_discover_options_init(&options, sizeof options);
    options.struct_size = (uint32_t)offsetof(nubo_device_discover_options, sim_devices);
    options.sim_devices = "3xNoSuchGPU";
    CHECK_STATUS(nubo_device_discover(&options, &r), NUBO_OK);
    CHECK(nubo_device_report_device_count(r) == 2);
    nubo_device_report_free(r);
  }
}

/* Returns 0 when a new thread starts with no error and then sees only its own. */
static int fail_in_thread(void* unused) {
  int fresh;
  (void)unused;
  fresh = strcmp(nubo_last_error(), "") == 0;
  nubo_device_report_link(NULL, 0, 0, NULL);
  return fresh && strstr(nubo_last_error(), "nubo_device_report_link: report is NULL") != NULL ? 0
                                                                                               : 1;
}

/* Each thread keeps its own last error. */
static void test_last_error_is_per_thread(void) {
  thrd_t thread;
  int result = -1;
  nubo_device_report_device(NULL, 0, NULL);
  CHECK_ERROR_MENTIONS("nubo_device_report_device: report is NULL");
  if (!CHECK(thrd_create(&thread, fail_in_thread, NULL) == thrd_success)) return;
  thrd_join(thread, &result);
  CHECK(result == 0);
  CHECK_ERROR_MENTIONS("nubo_device_report_device: report is NULL");
}

int main(void) {
  nubo_device_report* report;
  test_last_error_starts_empty();
  test_versions();
  test_environment_check();
  test_status_strings();
  test_options_init();
  test_discover_with_options();
  test_discover_from_environment();

  report = discover_two_a100();
  if (report != NULL) {
    test_device_info(report);
    test_links(report);
    test_host(report);
    test_diagnoses(report);
    test_json(report);
    test_select(report);
    test_bad_inputs(report);
    test_preflight_and_health(report);
    test_nics(report);
    test_struct_size_compatibility(report);
    nubo_device_report_free(report);
  }
  test_last_error_is_per_thread();

  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
