// The collectives in C, blocking and asynchronous, and the pending collectives they return.
#include "nubo_parallel.h"
#include "parallel_handles.hpp"

using namespace nubo::capi;

namespace {

// Hands a Pending to the caller as a handle.
void give(nubo::Pending p, nubo_pending** out) {
  *out = to_handle(new nubo::Pending(std::move(p)));
}

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_worker_all_reduce(nubo_worker* worker, nubo_buffer* buf,
                                              nubo_reduce_op op) {
  return guard("nubo_worker_all_reduce",
               [&] { require_worker(worker).all_reduce(require_buffer(buf, "buf"), to_op(op)); });
}

NUBO_C_API nubo_status nubo_worker_broadcast(nubo_worker* worker, nubo_buffer* buf, int root) {
  return guard("nubo_worker_broadcast",
               [&] { require_worker(worker).broadcast(require_buffer(buf, "buf"), root); });
}

NUBO_C_API nubo_status nubo_worker_all_gather(nubo_worker* worker, const nubo_buffer* in,
                                              nubo_buffer* out) {
  return guard("nubo_worker_all_gather", [&] {
    require_worker(worker).all_gather(require_buffer(in, "in"), require_buffer(out, "out"));
  });
}

NUBO_C_API nubo_status nubo_worker_reduce_scatter(nubo_worker* worker, const nubo_buffer* in,
                                                  nubo_buffer* out, nubo_reduce_op op) {
  return guard("nubo_worker_reduce_scatter", [&] {
    require_worker(worker).reduce_scatter(require_buffer(in, "in"), require_buffer(out, "out"),
                                          to_op(op));
  });
}

NUBO_C_API nubo_status nubo_worker_all_to_all(nubo_worker* worker, const nubo_buffer* in,
                                              nubo_buffer* out) {
  return guard("nubo_worker_all_to_all", [&] {
    require_worker(worker).all_to_all(require_buffer(in, "in"), require_buffer(out, "out"));
  });
}

NUBO_C_API nubo_status nubo_worker_barrier(nubo_worker* worker) {
  return guard("nubo_worker_barrier", [&] { require_worker(worker).barrier(); });
}

NUBO_C_API nubo_status nubo_worker_all_reduce_async(nubo_worker* worker, nubo_buffer* buf,
                                                    nubo_reduce_op op, nubo_pending** out) {
  return guard("nubo_worker_all_reduce_async", [&] {
    *require(out, "out") = nullptr;
    give(require_worker(worker).all_reduce_async(require_buffer(buf, "buf"), to_op(op)), out);
  });
}

NUBO_C_API nubo_status nubo_worker_broadcast_async(nubo_worker* worker, nubo_buffer* buf, int root,
                                                   nubo_pending** out) {
  return guard("nubo_worker_broadcast_async", [&] {
    *require(out, "out") = nullptr;
    give(require_worker(worker).broadcast_async(require_buffer(buf, "buf"), root), out);
  });
}

NUBO_C_API nubo_status nubo_worker_all_gather_async(nubo_worker* worker, const nubo_buffer* in,
                                                    nubo_buffer* out, nubo_pending** out_pending) {
  return guard("nubo_worker_all_gather_async", [&] {
    *require(out_pending, "out_pending") = nullptr;
    give(require_worker(worker).all_gather_async(require_buffer(in, "in"),
                                                 require_buffer(out, "out")),
         out_pending);
  });
}

NUBO_C_API nubo_status nubo_worker_all_to_all_async(nubo_worker* worker, const nubo_buffer* in,
                                                    nubo_buffer* out, nubo_pending** out_pending) {
  return guard("nubo_worker_all_to_all_async", [&] {
    *require(out_pending, "out_pending") = nullptr;
    give(require_worker(worker).all_to_all_async(require_buffer(in, "in"),
                                                 require_buffer(out, "out")),
         out_pending);
  });
}

NUBO_C_API nubo_status nubo_worker_reduce_scatter_async(nubo_worker* worker, const nubo_buffer* in,
                                                        nubo_buffer* out, nubo_reduce_op op,
                                                        nubo_pending** out_pending) {
  return guard("nubo_worker_reduce_scatter_async", [&] {
    *require(out_pending, "out_pending") = nullptr;
    give(require_worker(worker).reduce_scatter_async(require_buffer(in, "in"),
                                                     require_buffer(out, "out"), to_op(op)),
         out_pending);
  });
}

NUBO_C_API nubo_status nubo_worker_barrier_async(nubo_worker* worker, nubo_pending** out) {
  return guard("nubo_worker_barrier_async", [&] {
    *require(out, "out") = nullptr;
    give(require_worker(worker).barrier_async(), out);
  });
}

NUBO_C_API nubo_status nubo_pending_wait(nubo_pending* pending) {
  return guard("nubo_pending_wait", [&] { require(pending_of(pending), "pending")->wait(); });
}

NUBO_C_API int nubo_pending_done(const nubo_pending* pending) {
  if (!pending) return 1;
  try {
    return reinterpret_cast<const nubo::Pending*>(pending)->done() ? 1 : 0;
  } catch (...) {
    return 1;  // a failed collective is done; nubo_pending_wait reports it
  }
}

NUBO_C_API void nubo_pending_free(nubo_pending* pending) {
  delete pending_of(pending);
}

}  // extern "C"
