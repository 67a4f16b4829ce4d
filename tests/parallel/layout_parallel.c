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
  FIELD(nubo_worker_info, struct_size);
  FIELD(nubo_worker_info, rank);
  FIELD(nubo_worker_info, size);
  FIELD(nubo_worker_info, local_rank);
  FIELD(nubo_worker_info, local_size);
  FIELD(nubo_worker_info, backend);
  FIELD(nubo_worker_info, device_index);
  FIELD(nubo_worker_info, device_name);
  printf("\"sizeof.nubo_team_options\": [0, %zu], ", sizeof(nubo_team_options));
  printf("\"sizeof.nubo_worker_info\": [0, %zu]}\n", sizeof(nubo_worker_info));
  return 0;
}
