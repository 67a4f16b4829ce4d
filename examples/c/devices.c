/* The C ABI in a few lines: discover the devices, print them, their links and the diagnoses. */
#include <nubo.h>
#include <stdio.h>

int main(void) {
  nubo_device_report* report = NULL;
  if (nubo_device_discover(NULL, &report) != NUBO_OK) {
    fprintf(stderr, "nubo_device_discover: %s\n", nubo_last_error());
    return 1;
  }
  nubo_host_info host = {.struct_size = sizeof host};
  nubo_device_report_host(report, &host);
  printf("nubo %s, host: %s (%d threads)\n", nubo_version(), host.model, host.logical_cores);

  size_t n = nubo_device_report_device_count(report);
  for (size_t i = 0; i < n; ++i) {
    nubo_device_info d = {.struct_size = sizeof d};
    nubo_device_report_device(report, i, &d);
    printf("GPU%zu: %s, %.0f GiB, %.0f fp16 TFLOP/s, links:", i, d.name,
           (double)d.memory_total / (1u << 30), d.peak_tflops_fp16);
    for (size_t j = 0; j < n; ++j) {
      nubo_link_info l = {.struct_size = sizeof l};
      nubo_device_report_link(report, i, j, &l);
      printf(" %s", l.name);
    }
    printf("\n");
  }
  for (size_t i = 0; i < nubo_device_report_diagnosis_count(report); ++i) {
    nubo_diagnosis_info diag = {.struct_size = sizeof diag};
    nubo_device_report_diagnosis(report, i, &diag);
    printf("[%s] %s\n", diag.code, diag.message);
  }
  nubo_device_report_free(report);
  return 0;
}
