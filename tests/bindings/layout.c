/*
 * Prints the layout of nubo.h as the C compiler sees it: every struct's size, every field's
 * offset and size, every enum constant. The Python and Rust binding tests compare their
 * hand-written mirrors of nubo.h against this, so a header change that a binding misses fails a
 * test instead of corrupting memory.
 *
 * Output lines:  struct <name> <size>
 *                field <struct> <field> <offset> <size>
 *                const <NAME> <value>
 */
#include <stddef.h>
#include <stdio.h>

#include "nubo.h"

#define STRUCT(s) printf("struct %s %zu\n", #s, sizeof(s))
#define FIELD(s, f) printf("field %s %s %zu %zu\n", #s, #f, offsetof(s, f), sizeof(((s*)0)->f))
#define CONST(c) printf("const %s %lld\n", #c, (long long)(c))

int main(void) {
  STRUCT(nubo_discover_options);
  FIELD(nubo_discover_options, struct_size);
  FIELD(nubo_discover_options, sim_devices);
  FIELD(nubo_discover_options, sim_topology_file);
  FIELD(nubo_discover_options, probe_cuda);
  FIELD(nubo_discover_options, cuda_plugin_path);

  STRUCT(nubo_device_info);
  FIELD(nubo_device_info, struct_size);
  FIELD(nubo_device_info, backend);
  FIELD(nubo_device_info, index);
  FIELD(nubo_device_info, ordinal);
  FIELD(nubo_device_info, name);
  FIELD(nubo_device_info, model);
  FIELD(nubo_device_info, uuid);
  FIELD(nubo_device_info, pci_bus_id);
  FIELD(nubo_device_info, cc_major);
  FIELD(nubo_device_info, cc_minor);
  FIELD(nubo_device_info, multiprocessors);
  FIELD(nubo_device_info, clock_mhz);
  FIELD(nubo_device_info, memory_total);
  FIELD(nubo_device_info, memory_free);
  FIELD(nubo_device_info, memory_bandwidth_gbs);
  FIELD(nubo_device_info, peak_tflops_fp32);
  FIELD(nubo_device_info, peak_tflops_tf32);
  FIELD(nubo_device_info, peak_tflops_fp16);
  FIELD(nubo_device_info, peak_tflops_bf16);
  FIELD(nubo_device_info, peak_source);
  FIELD(nubo_device_info, numa_node);
  FIELD(nubo_device_info, mig_enabled);

  STRUCT(nubo_host_info);
  FIELD(nubo_host_info, struct_size);
  FIELD(nubo_host_info, model);
  FIELD(nubo_host_info, logical_cores);
  FIELD(nubo_host_info, physical_cores);
  FIELD(nubo_host_info, sockets);
  FIELD(nubo_host_info, numa_nodes);
  FIELD(nubo_host_info, memory_total);
  FIELD(nubo_host_info, memory_available);
  FIELD(nubo_host_info, blas);

  STRUCT(nubo_driver_info);
  FIELD(nubo_driver_info, struct_size);
  FIELD(nubo_driver_info, loaded);
  FIELD(nubo_driver_info, driver_version);
  FIELD(nubo_driver_info, runtime_version);
  FIELD(nubo_driver_info, driver_release);

  STRUCT(nubo_link_info);
  FIELD(nubo_link_info, struct_size);
  FIELD(nubo_link_info, kind);
  FIELD(nubo_link_info, nvlinks);
  FIELD(nubo_link_info, peer_access);
  FIELD(nubo_link_info, name);

  STRUCT(nubo_diagnosis_info);
  FIELD(nubo_diagnosis_info, struct_size);
  FIELD(nubo_diagnosis_info, code);
  FIELD(nubo_diagnosis_info, severity);
  FIELD(nubo_diagnosis_info, message);
  FIELD(nubo_diagnosis_info, advice);

  STRUCT(nubo_select_request);
  FIELD(nubo_select_request, struct_size);
  FIELD(nubo_select_request, count);
  FIELD(nubo_select_request, min_memory);
  FIELD(nubo_select_request, min_cc_major);
  FIELD(nubo_select_request, min_cc_minor);

  /* Enums travel as C ints; their size is checked like a field's. */
  printf("struct nubo_status %zu\n", sizeof(nubo_status));
  printf("struct nubo_backend %zu\n", sizeof(nubo_backend));
  printf("struct nubo_link_kind %zu\n", sizeof(nubo_link_kind));
  printf("struct nubo_severity %zu\n", sizeof(nubo_severity));

  CONST(NUBO_ABI_VERSION);
  CONST(NUBO_OK);
  CONST(NUBO_ERR_INVALID_ARGUMENT);
  CONST(NUBO_ERR_NOT_FOUND);
  CONST(NUBO_ERR_UNAVAILABLE);
  CONST(NUBO_ERR_IO);
  CONST(NUBO_ERR_CORRUPT);
  CONST(NUBO_ERR_TIMEOUT);
  CONST(NUBO_ERR_CANCELLED);
  CONST(NUBO_ERR_UNSUPPORTED);
  CONST(NUBO_ERR_OUT_OF_MEMORY);
  CONST(NUBO_ERR_INTERNAL);
  CONST(NUBO_BACKEND_HOST);
  CONST(NUBO_BACKEND_SIM);
  CONST(NUBO_BACKEND_CUDA);
  CONST(NUBO_LINK_SELF);
  CONST(NUBO_LINK_NVLINK);
  CONST(NUBO_LINK_PIX);
  CONST(NUBO_LINK_PXB);
  CONST(NUBO_LINK_PHB);
  CONST(NUBO_LINK_NODE);
  CONST(NUBO_LINK_SYS);
  CONST(NUBO_LINK_UNKNOWN);
  CONST(NUBO_SEVERITY_INFO);
  CONST(NUBO_SEVERITY_WARNING);
  CONST(NUBO_SEVERITY_ERROR);
  return 0;
}
