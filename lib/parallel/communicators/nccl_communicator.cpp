#include "parallel/communicators/nccl_communicator.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <thread>

#include "device/cuda/cuda_backend.hpp"
#include "device/cuda/cuda_backend_errors.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {

using Clock = std::chrono::steady_clock;

struct NcclCommunicator::State {
  const nubo_cuda_backend_api* api = nullptr;
  nubo_cuda_comm* comm = nullptr;
  std::string who;  // "rank 1 of 4 (cuda 1 (NVIDIA H200))", for messages
  std::chrono::milliseconds timeout{};
  std::string aborted;                // why, once aborted; the comm is gone then
  std::shared_ptr<DeviceEvent> last;  // the latest collective's completion
  // Another thread's request to stop (request_abort): acted on by the rank's own thread, which
  // alone may abort the communicator, at its next poll or collective.
  std::atomic<bool> stop_requested{false};
  std::mutex stop_mutex;
  std::string stop_reason;

  void act_on_stop_request() {
    if (!stop_requested.load(std::memory_order_acquire)) return;
    std::string why;
    {
      std::lock_guard lock(stop_mutex);
      why = stop_reason;
    }
    abort("cancelled because " + why);
    throw Error(Errc::cancelled, who + ": cancelled because " + why);
  }

  void abort(const std::string& why) {
    if (!aborted.empty()) return;
    aborted = why;
    api->nccl_abort(comm);  // never blocks on peers; frees the comm
    comm = nullptr;
  }

  void ensure_usable() {
    if (aborted.empty()) act_on_stop_request();
    if (!aborted.empty())
      throw Error(Errc::unavailable, who +
                                         ": the NCCL communicator was aborted after an earlier "
                                         "failure (" +
                                         aborted + "); make a new team");
  }

  // ncclCommGetAsyncError; a failure of that call itself aborts too.
  int32_t async_error() {
    int32_t result = kNcclSuccess;
    nubo_cuda_status st{};
    if (api->nccl_async_error(comm, &result, &st) != NUBO_CUDA_CALL_OK) {
      abort(describe_status(st));
      throw_cuda(st, who);
    }
    return result;
  }

  // Polls `done` until it is true, watching for an asynchronous NCCL error and the deadline;
  // either aborts the communicator and throws. Polling starts fast (small collectives finish in
  // microseconds) and backs off to 1 ms so a long wait costs little CPU.
  template <class Done>
  void poll(Done done, Clock::time_point deadline, const std::string& what) {
    auto pause = std::chrono::microseconds(10);
    for (;;) {
      if (done()) return;
      act_on_stop_request();
      const int32_t r = async_error();
      if (r != kNcclSuccess && r != kNcclInProgress) {
        nubo_cuda_status st{};
        st.library = NUBO_CUDA_LIB_NCCL;
        st.result = r;
        const std::string text = what + " failed (" + nccl_result_name(r) + ")";
        abort(text);
        throw Error(errc_for(st), who + ": " + describe_failure(st, what));
      }
      if (Clock::now() >= deadline) {
        abort(what + " timed out");
        throw Error(Errc::timeout,
                    who + ": NCCL " + what + " did not complete within " +
                        std::to_string(timeout.count()) +
                        " ms: another rank failed, exited, never called it, or called a "
                        "different collective (NCCL cannot tell which rank). The communicator "
                        "was aborted.");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }

  static std::string describe_failure(const nubo_cuda_status& st, const std::string& what) {
    nubo_cuda_status s = st;
    const std::string call = "NCCL " + what;
    std::snprintf(s.call, sizeof s.call, "%s", call.c_str());
    return describe_status(s) + " The communicator was aborted.";
  }
};

namespace {

class NcclHandle final : public CollectiveHandle {
 public:
  NcclHandle(std::shared_ptr<NcclCommunicator::State> state, std::shared_ptr<DeviceEvent> event,
             std::string what)
      : state_(std::move(state)),
        event_(std::move(event)),
        what_(std::move(what)),
        deadline_(Clock::now() + state_->timeout) {}

  void wait() override {
    if (finished_) return;
    state_->ensure_usable();
    state_->poll([&] { return event_->done(); }, deadline_, what_);
    finished_ = true;
  }

  bool done() override {
    if (finished_ || !state_->aborted.empty()) return true;
    if (event_->done()) return true;
    // An asynchronous error means wait() would throw at once: that is "done" too.
    const int32_t r = state_->async_error();
    return r != kNcclSuccess && r != kNcclInProgress;
  }

 private:
  std::shared_ptr<NcclCommunicator::State> state_;
  std::shared_ptr<DeviceEvent> event_;
  std::string what_;
  Clock::time_point deadline_;
  bool finished_ = false;
};

// A collective of zero elements: nothing to send, already complete on every rank.
class DoneHandle final : public CollectiveHandle {
 public:
  void wait() override {}
  bool done() override { return true; }
};

CudaBackend& cuda_backend_of(DeviceBackend& b) {
  auto* c = dynamic_cast<CudaBackend*>(&b);
  if (!c)
    throw Error(Errc::invalid_argument,
                "NCCL needs CUDA devices; " + b.describe() +
                    " is not one (host and sim teams use the shared-memory or Gloo communicator)");
  return *c;
}

void require_nccl(const CudaBackend& b) {
  const nubo_cuda_backend_api* api = b.api();
  if (!NUBO_CUDA_TABLE_HAS(api, nccl_destroy) || !api->nccl_init_all || !api->nccl_collective)
    throw Error(Errc::unsupported, b.describe() +
                                       ": the CUDA plugin was built without NCCL (libnccl-dev "
                                       "was not found); rebuild nubo with NCCL installed");
}

void check_type(DType type, const std::string& who) {
  if (dtype_size(type) == 0)
    throw Error(Errc::invalid_argument,
                who + ": unknown dtype " + std::to_string(static_cast<int>(type)));
}

}  // namespace

NcclCommunicator::NcclCommunicator(CudaBackend& backend, nubo_cuda_comm* comm, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : backend_(backend), state_(std::make_shared<State>()), rank_(rank), size_(size) {
  state_->api = backend.api();
  state_->comm = comm;
  state_->who = "rank " + std::to_string(rank) + " of " + std::to_string(size) + " (" +
                backend.describe() + ")";
  state_->timeout = timeout;
  try {
    barrier_word_ = backend_.allocate(sizeof(std::int32_t));
  } catch (...) {
    state_->abort("setup failed");
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  // Never hang here either: wait (bounded) for the last collective, then destroy; abort when
  // it does not finish.
  try {
    if (state_->aborted.empty() && state_->last)
      state_->poll([&] { return state_->last->done(); }, Clock::now() + state_->timeout,
                   "the last collective, at shutdown");
    if (state_->aborted.empty()) {
      nubo_cuda_status st{};
      if (state_->api->nccl_destroy(state_->comm, &st) != NUBO_CUDA_CALL_OK) { /* best effort */
      }
      state_->comm = nullptr;
      state_->aborted = "destroyed";
    }
  } catch (...) {
    // poll() has aborted the communicator already.
  }
  state_->last.reset();
  try {
    backend_.free(barrier_word_);
  } catch (...) {
  }
}

std::unique_ptr<CollectiveHandle> NcclCommunicator::launch(const nubo_cuda_collective_args& args,
                                                           const std::string& what) {
  state_->ensure_usable();
  const Clock::time_point deadline = Clock::now() + state_->timeout;
  nubo_cuda_status st{};
  const int rc = state_->api->nccl_collective(state_->comm, backend_.handle(), &args, &st);
  if (rc == NUBO_CUDA_CALL_FAILED) {
    state_->abort(what + " could not start");
    throw Error(errc_for(st), state_->who + ": " + State::describe_failure(st, what));
  }
  if (rc == NUBO_CUDA_CALL_IN_PROGRESS)  // a nonblocking communicator still enqueuing
    state_->poll([&] { return state_->async_error() == kNcclSuccess; }, deadline, what);
  std::shared_ptr<DeviceEvent> event = backend_.create_event();
  backend_.record(*event);
  state_->last = event;
  return std::make_unique<NcclHandle>(state_, std::move(event), what);
}

void NcclCommunicator::run(const parallel::Op& op) {
  submit(op)->wait();
}

std::unique_ptr<CollectiveHandle> NcclCommunicator::submit(const parallel::Op& op) {
  using parallel::OpKind;
  check_type(op.type, state_->who);
  nubo_cuda_collective_args a{};
  a.dtype = static_cast<int32_t>(op.type);
  a.op = static_cast<int32_t>(op.op);
  a.send = op.in;
  a.recv = op.out;
  a.count = op.count;
  switch (op.kind) {
    case OpKind::all_reduce:
      a.kind = NUBO_CUDA_ALL_REDUCE;
      break;
    case OpKind::broadcast:
      if (op.root < 0 || op.root >= size_)
        throw Error(Errc::invalid_argument, state_->who + ": broadcast root " +
                                                std::to_string(op.root) + " is not a rank (0.." +
                                                std::to_string(size_ - 1) + ")");
      a.kind = NUBO_CUDA_BROADCAST;
      a.root = op.root;
      break;
    case OpKind::all_gather:
      a.kind = NUBO_CUDA_ALL_GATHER;
      break;
    case OpKind::reduce_scatter:
      a.kind = NUBO_CUDA_REDUCE_SCATTER;
      break;
    case OpKind::all_to_all:
      a.kind = NUBO_CUDA_ALL_TO_ALL;
      break;
    case OpKind::barrier:
      // NCCL has no barrier: an all-reduce of one int32 that every rank must join.
      a = {NUBO_CUDA_ALL_REDUCE,
           static_cast<int32_t>(DType::i32),
           static_cast<int32_t>(ReduceOp::sum),
           0,
           barrier_word_,
           barrier_word_,
           1};
      break;
  }
  // Nothing to send: already complete on every rank.
  if (a.count == 0) return std::make_unique<DoneHandle>();
  return launch(a, parallel::describe(op));
}

void NcclCommunicator::request_abort(const std::string& why) noexcept {
  try {
    std::lock_guard lock(state_->stop_mutex);
    if (state_->stop_reason.empty()) state_->stop_reason = why;
  } catch (...) {  // no memory for the reason: stop anyway, with less to say
  }
  state_->stop_requested.store(true, std::memory_order_release);
}

void* NcclCommunicator::native() const {
  if (!state_->aborted.empty() || !state_->comm) return nullptr;
  const nubo_cuda_backend_api* api = state_->api;
  return NUBO_CUDA_TABLE_HAS(api, nccl_native) ? api->nccl_native(state_->comm) : nullptr;
}

// --- Setup ----------------------------------------------------------------------------------

std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(
    const std::vector<DeviceBackend*>& backends, std::chrono::milliseconds timeout) {
  if (backends.empty()) throw Error(Errc::invalid_argument, "make_nccl_communicators: no devices");
  std::vector<CudaBackend*> cuda;
  std::vector<nubo_cuda_backend*> handles;
  for (DeviceBackend* b : backends) {
    cuda.push_back(&cuda_backend_of(*b));
    handles.push_back(cuda.back()->handle());
  }
  require_nccl(*cuda.front());
  const nubo_cuda_backend_api* api = cuda.front()->api();
  const int n = static_cast<int>(backends.size());
  std::vector<nubo_cuda_comm*> comms(backends.size(), nullptr);
  nubo_cuda_status st{};
  // One process holds every rank, so no peer can be missing: ncclCommInitAll cannot hang on
  // one. Its failures (a GPU listed twice, no peer path) are reported like any other.
  if (api->nccl_init_all(handles.data(), n, comms.data(), &st) != NUBO_CUDA_CALL_OK)
    throw_cuda(st, "NCCL setup for " + std::to_string(n) + " GPUs in this process");
  std::vector<std::unique_ptr<Communicator>> out;
  for (int i = 0; i < n; ++i) {
    try {
      out.push_back(std::make_unique<NcclCommunicator>(
          *cuda[static_cast<std::size_t>(i)], comms[static_cast<std::size_t>(i)], i, n, timeout));
    } catch (...) {
      for (int j = i + 1; j < n; ++j) api->nccl_abort(comms[static_cast<std::size_t>(j)]);
      throw;
    }
  }
  return out;
}

std::unique_ptr<Communicator> make_nccl_communicator(DeviceBackend& backend, int rank, int size,
                                                     RendezvousBytes& store,
                                                     std::chrono::milliseconds timeout,
                                                     const std::string& key) {
  CudaBackend& cuda = cuda_backend_of(backend);
  require_nccl(cuda);
  const std::string who =
      "rank " + std::to_string(rank) + " of " + std::to_string(size) + " (" + cuda.describe() + ")";
  if (size < 1 || rank < 0 || rank >= size)
    throw Error(Errc::invalid_argument, who + ": rank must be in 0.." + std::to_string(size - 1));
  const nubo_cuda_backend_api* api = cuda.api();
  const Clock::time_point deadline = Clock::now() + timeout;

  std::string id;
  nubo_cuda_status st{};
  if (rank == 0) {
    std::uint8_t raw[NUBO_CUDA_NCCL_ID_SIZE] = {};
    cuda.check(api->nccl_unique_id(raw, &st), st);
    id.assign(reinterpret_cast<const char*>(raw), sizeof raw);
    store.set(key, id);
  } else {
    try {
      id = store.get(key, timeout);
    } catch (const Error& e) {
      throw Error(e.code(), who + ": rank 0 did not publish the NCCL id under '" + key +
                                "' in time; is rank 0 running? (" + e.what() + ")");
    }
    if (id.size() != NUBO_CUDA_NCCL_ID_SIZE)
      throw Error(Errc::corrupt, who + ": the NCCL id under '" + key + "' has " +
                                     std::to_string(id.size()) + " bytes, not " +
                                     std::to_string(NUBO_CUDA_NCCL_ID_SIZE));
  }

  nubo_cuda_comm* comm = nullptr;
  const int rc = api->nccl_init_rank(
      cuda.handle(), size, reinterpret_cast<const std::uint8_t*>(id.data()), rank, &comm, &st);
  if (rc == NUBO_CUDA_CALL_FAILED) throw_cuda(st, who + ": NCCL setup");
  auto result = std::make_unique<NcclCommunicator>(cuda, comm, rank, size, timeout);
  if (rc == NUBO_CUDA_CALL_IN_PROGRESS) {
    // Peers are still joining; a rank that never comes makes this time out, and poll()
    // aborts the half-made communicator.
    auto& state = *result->state_for_setup();
    state.poll([&] { return state.async_error() == kNcclSuccess; }, deadline,
               "setup (waiting for all " + std::to_string(size) + " ranks to join)");
  }
  return result;
}

}  // namespace nubo::detail
