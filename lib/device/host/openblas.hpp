// OpenBLAS, loaded the first time it is needed. Linked, it would start its thread pool in every
// process that loads libnubo: (cores - 1) threads that spin for about 0.1 s before they sleep,
// even in programs that never multiply a matrix (nubo-xfer, nubo-cost), where they take the
// cores the work needs. So libnubo dlopens it when a GEMM or its configuration is first asked
// for.
//
// OpenBLAS has one thread count for the whole library, and its threaded GEMMs called from
// several threads at once take turns (a lock around its level-3 driver). Host workers that share
// a machine's cores each need their own count, without changing it for the process's other
// users: openblas_copy() gives them private copies of the library (openblas_copies.cpp).
#pragma once

#include <cblas.h>
#include <sched.h>

#include <string>

namespace nubo::detail {

struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  // Only in an OpenBLAS built with BUILD_BFLOAT16 (Debian 12's is not): null otherwise.
  decltype(&cblas_sbgemm) sbgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
  int (*get_num_threads)() = nullptr;
  // openblas_setaffinity(thread, size, set): pins pool thread `thread` (0 .. threads - 2; the
  // last index is the calling thread). Null in builds without it.
  int (*setaffinity)(int, std::size_t, cpu_set_t*) = nullptr;
  std::string config;  // openblas_get_config(): its version and the kernel in use
};

// Loads it once (thread-safe); Error(unavailable) naming the package to install when it cannot.
const OpenBlas& openblas();

// Its configuration, or why it cannot be loaded; never throws.
std::string openblas_description();

// The symbols of a loaded OpenBLAS (`handle` from dlopen or dlmopen); Error(unavailable) when
// one it cannot do without is missing.
OpenBlas openblas_symbols(void* handle);

// The first library name that loads, tried with `open` (dlopen, or dlmopen into a namespace of
// its own); Error(unavailable) naming the package to install when none does.
void* open_openblas(void* (*open)(const char* name));

}  // namespace nubo::detail
