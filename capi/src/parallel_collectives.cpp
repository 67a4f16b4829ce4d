// The pending collectives the asynchronous collectives return (their entry points are generated:
// generated/collectives.cpp).
#include "nubo_parallel.h"
#include "parallel_handles.hpp"

using namespace nubo::capi;

extern "C" {

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
