/* The installed C ABI: discover two simulated GPUs and print how many there are. */
#include <stdio.h>

#include <nubo.h>

int main(void) {
  nubo_device_discover_options options;
  nubo_device_report* report = NULL;
  size_t count;
  if (nubo_device_discover_options_init(&options, sizeof options) != NUBO_OK) return 1;
  options.sim_devices = "2xA100-SXM4-80GB";
  options.probe_cuda = 0;
  if (nubo_device_discover(&options, &report) != NUBO_OK) {
    fprintf(stderr, "consumer_c: %s\n", nubo_last_error());
    return 1;
  }
  count = nubo_device_report_device_count(report);
  printf("nubo %s (C): %zu devices\n", nubo_version(), count);
  nubo_device_report_free(report);
  return count == 2 ? 0 : 1;
}
