// The NCCL part of the plugin's backend table: communicator setup (ncclCommInitAll in one
// process, nonblocking ncclCommInitRankConfig across processes), the four collectives on the
// backend's stream in use, and the calls libnubo needs to never hang: ncclCommGetAsyncError and
// ncclCommAbort. The timeouts themselves live in libnubo
// (lib/parallel/communicators/nccl_communicator.cpp).
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "backend_state.hpp"
#include "plugin_status.hpp"

struct nubo_cuda_comm {
  ncclComm_t comm = nullptr;
  int ordinal = 0;
};

namespace nubo::cuda_plugin {
namespace {

int nccl_result(ncclResult_t r, const char* call, nubo_cuda_comm* c, nubo_cuda_status* st) {
  if (r == ncclSuccess) return NUBO_CUDA_CALL_OK;
  if (r == ncclInProgress) return NUBO_CUDA_CALL_IN_PROGRESS;
  char text[NUBO_CUDA_MESSAGE_SIZE];
  // ncclGetLastError holds the detail (which peer, which socket) where NCCL knows it.
  const char* last = ncclGetLastError(c ? c->comm : nullptr);
  std::snprintf(text, sizeof text, "%s%s%s", ncclGetErrorString(r), last && *last ? ": " : "",
                last ? last : "");
  return fail(st, NUBO_CUDA_LIB_NCCL, static_cast<int32_t>(r), call, text);
}

size_t nccl_type_size(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt64:
      return 8;
    default:
      return 4;  // ncclFloat32, ncclInt32: the others nccl_type never gives
  }
}

bool nccl_type(int32_t dtype, ncclDataType_t& out) {
  switch (dtype) {  // nubo::DType values
    case 0:
      out = ncclFloat32;
      return true;
    case 1:
      out = ncclFloat16;
      return true;
    case 2:
      out = ncclBfloat16;
      return true;
    case 3:
      out = ncclInt32;
      return true;
    case 4:
      out = ncclInt64;
      return true;
    default:
      return false;
  }
}

bool nccl_op(int32_t op, ncclRedOp_t& out) {
  switch (op) {  // nubo::ReduceOp values
    case 0:
      out = ncclSum;
      return true;
    case 1:
      out = ncclAvg;
      return true;
    case 2:
      out = ncclMax;
      return true;
    case 3:
      out = ncclMin;
      return true;
    default:
      return false;
  }
}

// NCCL 2.22+ connects ranks lazily, inside a communicator's first collective; on a blocking
// communicator (ncclCommInitAll makes those) that wait happens inside the enqueue call, on the
// CPU, where libnubo's timeout cannot reach it, so a rank that never calls would hang its
// peers. NCCL_RUNTIME_CONNECT=0 moves the connecting into setup: ncclCommInitAll connects ranks
// that are all in this process, and the nonblocking ncclCommInitRankConfig does it while libnubo
// polls with its timeout. A value the user set is kept. Once, before the first NCCL call.
void prefer_connecting_at_setup() {
  static std::once_flag once;
  std::call_once(once, [] { ::setenv("NCCL_RUNTIME_CONNECT", "0", 0); });
}

int version(int32_t* v, nubo_cuda_status* st) {
  int n = 0;
  const int rc = nccl_result(ncclGetVersion(&n), "ncclGetVersion", nullptr, st);
  *v = n;
  return rc;
}

int unique_id(uint8_t id[NUBO_CUDA_NCCL_ID_SIZE], nubo_cuda_status* st) {
  static_assert(sizeof(ncclUniqueId) == NUBO_CUDA_NCCL_ID_SIZE);
  prefer_connecting_at_setup();
  ncclUniqueId u;
  if (int rc = nccl_result(ncclGetUniqueId(&u), "ncclGetUniqueId", nullptr, st)) return rc;
  std::memcpy(id, u.internal, sizeof u.internal);
  return NUBO_CUDA_CALL_OK;
}

int init_all(nubo_cuda_backend* const* backends, int32_t n, nubo_cuda_comm** out,
             nubo_cuda_status* st) {
  if (!backends || !out || n < 1) return bad_argument(st, "ncclCommInitAll", "no backends");
  prefer_connecting_at_setup();
  std::vector<int> devices(static_cast<size_t>(n));
  std::vector<ncclComm_t> comms(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) devices[static_cast<size_t>(i)] = backends[i]->ordinal;
  if (int rc = nccl_result(ncclCommInitAll(comms.data(), n, devices.data()), "ncclCommInitAll",
                           nullptr, st))
    return rc;
  for (int32_t i = 0; i < n; ++i) {
    out[i] = new (std::nothrow)
        nubo_cuda_comm{comms[static_cast<size_t>(i)], devices[static_cast<size_t>(i)]};
    if (!out[i]) {
      for (int32_t j = 0; j < n; ++j) {
        ncclCommDestroy(comms[static_cast<size_t>(j)]);
        if (j < i) delete out[j];
      }
      return fail(st, NUBO_CUDA_LIB_PLUGIN, NUBO_CUDA_PLUGIN_INTERNAL, "new", "no memory");
    }
  }
  return NUBO_CUDA_CALL_OK;
}

int init_rank(nubo_cuda_backend* b, int32_t nranks, const uint8_t id[NUBO_CUDA_NCCL_ID_SIZE],
              int32_t rank, nubo_cuda_comm** out, nubo_cuda_status* st) {
  if (!b || !out) return bad_argument(st, "ncclCommInitRankConfig", "null argument");
  prefer_connecting_at_setup();
  if (int rc = check_cuda(cudaSetDevice(b->ordinal), "cudaSetDevice", st)) return rc;
  auto* c = new (std::nothrow) nubo_cuda_comm{nullptr, b->ordinal};
  if (!c) return fail(st, NUBO_CUDA_LIB_PLUGIN, NUBO_CUDA_PLUGIN_INTERNAL, "new", "no memory");
  ncclUniqueId u;
  std::memcpy(u.internal, id, sizeof u.internal);
  // Nonblocking: the call returns while peers are still joining, so libnubo can give up (and
  // abort) when one never comes, instead of blocking in NCCL's bootstrap forever.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const int rc = nccl_result(ncclCommInitRankConfig(&c->comm, nranks, u, rank, &config),
                             "ncclCommInitRankConfig", c, st);
  if (rc == NUBO_CUDA_CALL_FAILED) {
    if (c->comm) ncclCommAbort(c->comm);
    delete c;
    return rc;
  }
  *out = c;
  return rc;
}

int async_error(nubo_cuda_comm* c, int32_t* result, nubo_cuda_status* st) {
  if (!c) return bad_argument(st, "ncclCommGetAsyncError", "null communicator");
  ncclResult_t r = ncclSuccess;
  const ncclResult_t q = ncclCommGetAsyncError(c->comm, &r);
  if (q != ncclSuccess) return nccl_result(q, "ncclCommGetAsyncError", c, st);
  *result = static_cast<int32_t>(r);
  return NUBO_CUDA_CALL_OK;
}

// NCCL has no all-to-all call: a group of one send and one receive per peer, as
// nccl-tests' alltoall and PyTorch's all_to_all_single do.
int all_to_all(nubo_cuda_comm* c, nubo_cuda_backend* b, const nubo_cuda_collective_args* a,
               ncclDataType_t type, nubo_cuda_status* st) {
  int ranks = 0;
  if (const ncclResult_t r = ncclCommCount(c->comm, &ranks); r != ncclSuccess)
    return nccl_result(r, "ncclCommCount", c, st);
  const size_t bytes = a->count * nccl_type_size(type);
  if (const ncclResult_t r = ncclGroupStart(); r != ncclSuccess)
    return nccl_result(r, "ncclGroupStart", c, st);
  for (int peer = 0; peer < ranks; ++peer) {
    const auto at = static_cast<size_t>(peer) * bytes;
    ncclResult_t r =
        ncclSend(static_cast<const char*>(a->send) + at, a->count, type, peer, c->comm, b->stream);
    if (r == ncclSuccess)
      r = ncclRecv(static_cast<char*>(a->recv) + at, a->count, type, peer, c->comm, b->stream);
    if (r != ncclSuccess) {
      ncclGroupEnd();
      return nccl_result(r, "ncclSend/ncclRecv", c, st);
    }
  }
  return nccl_result(ncclGroupEnd(), "ncclGroupEnd", c, st);
}

int collective(nubo_cuda_comm* c, nubo_cuda_backend* b, const nubo_cuda_collective_args* a,
               nubo_cuda_status* st) {
  if (!c || !b || !a) return bad_argument(st, "collective", "null argument");
  ncclDataType_t type;
  ncclRedOp_t op = ncclSum;
  if (!nccl_type(a->dtype, type)) return bad_argument(st, "collective", "unknown dtype");
  if ((a->kind == NUBO_CUDA_ALL_REDUCE || a->kind == NUBO_CUDA_REDUCE_SCATTER) &&
      !nccl_op(a->op, op))
    return bad_argument(st, "collective", "unknown reduce op");
  if (int rc = check_cuda(cudaSetDevice(b->ordinal), "cudaSetDevice", st)) return rc;
  const size_t n = a->count;
  switch (a->kind) {
    case NUBO_CUDA_ALL_REDUCE:
      return nccl_result(ncclAllReduce(a->send, a->recv, n, type, op, c->comm, b->stream),
                         "ncclAllReduce", c, st);
    case NUBO_CUDA_BROADCAST:
      return nccl_result(ncclBroadcast(a->send, a->recv, n, type, a->root, c->comm, b->stream),
                         "ncclBroadcast", c, st);
    case NUBO_CUDA_ALL_GATHER:
      return nccl_result(ncclAllGather(a->send, a->recv, n, type, c->comm, b->stream),
                         "ncclAllGather", c, st);
    case NUBO_CUDA_REDUCE_SCATTER:
      return nccl_result(ncclReduceScatter(a->send, a->recv, n, type, op, c->comm, b->stream),
                         "ncclReduceScatter", c, st);
    case NUBO_CUDA_ALL_TO_ALL:
      return all_to_all(c, b, a, type, st);
    default:
      return bad_argument(st, "collective", "unknown collective kind");
  }
}

void abort_comm(nubo_cuda_comm* c) {
  if (!c) return;
  if (c->comm) ncclCommAbort(c->comm);
  delete c;
}

int destroy_comm(nubo_cuda_comm* c, nubo_cuda_status* st) {
  if (!c) return NUBO_CUDA_CALL_OK;
  const int rc = nccl_result(ncclCommDestroy(c->comm), "ncclCommDestroy", nullptr, st);
  delete c;
  return rc;
}

void* native_comm(nubo_cuda_comm* c) {
  return c ? c->comm : nullptr;
}

}  // namespace

void fill_nccl_functions(nubo_cuda_backend_api& t) {
  t.nccl_version = version;
  t.nccl_unique_id = unique_id;
  t.nccl_init_all = init_all;
  t.nccl_init_rank = init_rank;
  t.nccl_async_error = async_error;
  t.nccl_collective = collective;
  t.nccl_abort = abort_comm;
  t.nccl_destroy = destroy_comm;
  t.nccl_native = native_comm;
}

}  // namespace nubo::cuda_plugin
