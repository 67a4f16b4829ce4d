/* The layout of nubo_parallel.h's structs as the C compiler sees it, as JSON, for the Python
   test to compare with its ctypes mirror. */
#include <stddef.h>
#include <stdio.h>

#include "nubo.h"

#define FIELD(s, f) printf("\"%s.%s\": [%zu, %zu], ", #s, #f, offsetof(s, f), sizeof(((s*)0)->f))

int main(void) {
  printf("{");
  FIELD(nubo_team_options, struct_size);
  FIELD(nubo_team_options, timeout_seconds);
  FIELD(nubo_team_options, cpu_bind);
  FIELD(nubo_worker_info, struct_size);
  FIELD(nubo_worker_info, rank);
  FIELD(nubo_worker_info, size);
  FIELD(nubo_worker_info, local_rank);
  FIELD(nubo_worker_info, local_size);
  FIELD(nubo_worker_info, backend);
  FIELD(nubo_worker_info, device_index);
  FIELD(nubo_worker_info, device_name);
  FIELD(nubo_worker_info, host_threads);
  FIELD(nubo_worker_info, cpus);
  FIELD(nubo_worker_info, cpu_count);
  FIELD(nubo_gemm, struct_size);
  FIELD(nubo_gemm, trans_a);
  FIELD(nubo_gemm, trans_b);
  FIELD(nubo_gemm, m);
  FIELD(nubo_gemm, n);
  FIELD(nubo_gemm, k);
  FIELD(nubo_gemm, alpha);
  FIELD(nubo_gemm, beta);
  FIELD(nubo_gemm, lda);
  FIELD(nubo_gemm, ldb);
  FIELD(nubo_gemm, ldc);
  FIELD(nubo_native_handles, struct_size);
  FIELD(nubo_native_handles, cuda_stream);
  FIELD(nubo_native_handles, cublas_handle);
  FIELD(nubo_native_handles, nccl_comm);
  FIELD(nubo_native_handles, device_ordinal);
  printf("\"sizeof.nubo_gemm\": [0, %zu], ", sizeof(nubo_gemm));
  printf("\"sizeof.nubo_native_handles\": [0, %zu], ", sizeof(nubo_native_handles));
  printf("\"sizeof.nubo_team_options\": [0, %zu], ", sizeof(nubo_team_options));
  printf("\"sizeof.nubo_worker_info\": [0, %zu]}\n", sizeof(nubo_worker_info));
  return 0;
}
