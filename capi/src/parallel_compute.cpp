// Compute on a worker in C: GEMM, the elementwise kernels, and waiting for the worker's stream.
#include "nubo_parallel.h"
#include "parallel_handles.hpp"
#include "sized_struct.hpp"

namespace nubo::capi {
namespace {

nubo_worker_gemm_request default_gemm() {
  nubo_worker_gemm_request g{};
  g.struct_size = sizeof g;
  g.trans_a = g.trans_b = NUBO_TRANSPOSE_NO;
  g.alpha = 1.0f;
  g.beta = 0.0f;
  return g;
}

Gemm read_gemm(const nubo_worker_gemm_request& in) {
  const nubo_worker_gemm_request c =
      read_sized(in, default_gemm(), "gemm", "nubo_worker_gemm_request_init");
  return Gemm{.trans_a = to_transpose(c.trans_a, "gemm->trans_a"),
              .trans_b = to_transpose(c.trans_b, "gemm->trans_b"),
              .m = c.m,
              .n = c.n,
              .k = c.k,
              .alpha = c.alpha,
              .beta = c.beta,
              .lda = c.lda,
              .ldb = c.ldb,
              .ldc = c.ldc};
}

}  // namespace
}  // namespace nubo::capi

using namespace nubo::capi;

extern "C" {

NUBO_C_API nubo_status nubo_worker_gemm_request_init(nubo_worker_gemm_request* gemm,
                                                     size_t struct_size) {
  return guard("nubo_worker_gemm_request_init", [&] {
    init_sized(default_gemm(), require(gemm, "gemm"), struct_size, "nubo_worker_gemm_request");
  });
}

NUBO_C_API nubo_status nubo_worker_gemm(nubo_worker* worker, const nubo_worker_gemm_request* gemm,
                                        const nubo_buffer* a, const nubo_buffer* b,
                                        nubo_buffer* c) {
  return guard("nubo_worker_gemm", [&] {
    nubo::Worker& w = require_worker(worker);
    const nubo::Gemm g = read_gemm(*require(gemm, "gemm"));
    w.gemm(g, require_buffer(a, "a"), require_buffer(b, "b"), require_buffer(c, "c"));
  });
}

NUBO_C_API nubo_status nubo_worker_fill(nubo_worker* worker, nubo_buffer* x, double value) {
  return guard("nubo_worker_fill",
               [&] { require_worker(worker).fill(require_buffer(x, "x"), value); });
}

NUBO_C_API nubo_status nubo_worker_scale(nubo_worker* worker, nubo_buffer* x, float alpha) {
  return guard("nubo_worker_scale",
               [&] { require_worker(worker).scale(require_buffer(x, "x"), alpha); });
}

NUBO_C_API nubo_status nubo_worker_axpy(nubo_worker* worker, float alpha, const nubo_buffer* x,
                                        nubo_buffer* y) {
  return guard("nubo_worker_axpy", [&] {
    require_worker(worker).axpy(alpha, require_buffer(x, "x"), require_buffer(y, "y"));
  });
}

NUBO_C_API nubo_status nubo_worker_synchronize(nubo_worker* worker) {
  return guard("nubo_worker_synchronize", [&] { require_worker(worker).synchronize(); });
}

}  // extern "C"
