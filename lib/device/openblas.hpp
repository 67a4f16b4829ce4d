// OpenBLAS, loaded the first time it is needed. Linked, it would start its thread pool in every
// process that loads libnubo: (cores - 1) threads that spin for about 0.1 s before they sleep,
// even in programs that never multiply a matrix (nubo-xfer, nubo-cost), where they take the
// cores the work needs. So libnubo dlopens it when a GEMM or its configuration is first asked
// for.
#pragma once

#include <cblas.h>

#include <string>

namespace nubo::detail {

struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  // Only in an OpenBLAS built with BUILD_BFLOAT16 (Debian 12's is not): null otherwise.
  decltype(&cblas_sbgemm) sbgemm = nullptr;
  std::string config;  // openblas_get_config(): its version and the kernel in use
};

// Loads it once (thread-safe); Error(unavailable) naming the package to install when it cannot.
const OpenBlas& openblas();

// Its configuration, or why it cannot be loaded; never throws.
std::string openblas_description();

}  // namespace nubo::detail
