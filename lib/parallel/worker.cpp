// Worker: the checks every collective makes on its arguments, and the dispatch to the
// worker's communicator (shared memory and Gloo, or NCCL).
#include "device/backend.hpp"
#include "nubo/error.hpp"
#include "parallel/team_state.hpp"

namespace nubo {
namespace {

using parallel::Op;
using parallel::OpKind;

void check_op(ReduceOp op, const char* what) {
  if (reduce_op_name(op) == "unknown") {
    throw Error(Errc::invalid_argument, std::string(what) + ": unknown reduce op " +
                                            std::to_string(static_cast<int>(op)) +
                                            " (use sum, avg, max or min)");
  }
}

void check_buffer(const detail::WorkerState& w, const DeviceBuffer& b, const char* what,
                  const char* name) {
  if (b.data() == nullptr) {
    throw Error(Errc::invalid_argument,
                std::string(what) + ": " + name + " is an empty (moved-from) buffer");
  }
  if (detail::BufferAccess::backend(b) != w.backend.get()) {
    throw Error(Errc::invalid_argument,
                std::string(what) + ": " + name + " lives on " + b.device().name + " (device " +
                    std::to_string(b.device().index) + "), not on rank " + std::to_string(w.rank) +
                    "'s device: each worker passes buffers it allocated itself");
  }
}

bool overlap(const DeviceBuffer& a, const DeviceBuffer& b) {
  auto pa = reinterpret_cast<std::uintptr_t>(a.data());
  auto pb = reinterpret_cast<std::uintptr_t>(b.data());
  return pa < pb + b.bytes() && pb < pa + a.bytes();
}

void check_pair(const detail::WorkerState& w, const DeviceBuffer& in, const DeviceBuffer& out,
                const char* what) {
  check_buffer(w, in, what, "in");
  check_buffer(w, out, what, "out");
  if (in.dtype() != out.dtype()) {
    throw Error(Errc::invalid_argument, std::string(what) + ": in holds " +
                                            std::string(dtype_name(in.dtype())) + " but out " +
                                            std::string(dtype_name(out.dtype())));
  }
  if (overlap(in, out) && in.bytes() > 0 && out.bytes() > 0) {
    throw Error(Errc::invalid_argument, std::string(what) + ": in and out overlap");
  }
}

std::string size_text(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " element" : " elements");
}

}  // namespace

// --- Pending ---------------------------------------------------------------------------------

Pending::Pending() = default;
Pending::Pending(std::unique_ptr<detail::CollectiveHandle> handle) : handle_(std::move(handle)) {}
Pending::Pending(Pending&&) noexcept = default;
Pending& Pending::operator=(Pending&&) noexcept = default;
Pending::~Pending() = default;  // the handle waits for an unwaited collective

void Pending::wait() {
  if (!handle_) return;
  auto h = std::move(handle_);  // waited once; a second wait() returns at once
  h->wait();
}

bool Pending::done() const {
  return !handle_ || handle_->done();
}

// --- Worker ----------------------------------------------------------------------------------

int Worker::rank() const {
  return state_->rank;
}
int Worker::size() const {
  return state_->size;
}
int Worker::local_rank() const {
  return state_->local;
}
int Worker::local_size() const {
  return state_->local_size;
}
const Device& Worker::device() const {
  return state_->backend->device();
}

Shard Worker::shard(std::size_t n) const {
  const auto size = static_cast<std::size_t>(state_->size);
  const auto r = static_cast<std::size_t>(state_->rank);
  const std::size_t base = n / size, extra = n % size;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

DeviceBuffer Worker::alloc(DType type, std::size_t count) {
  return DeviceBuffer(state_->backend, type, count);
}

namespace {

// Runs op blocking (no hand-over to the progress thread) or hands it over, on either kind of
// communicator. Device work queued before the collective is finished first: host and sim
// backends have nothing pending, but the rule keeps this right for any backend.
void run_blocking(detail::WorkerState& w, const Op& op) {
  w.backend->synchronize();
  if (w.host_comm) return w.host_comm->run(op);
  switch (op.kind) {
    case OpKind::all_reduce:
      return w.comm->all_reduce(op.out, op.count, op.type, op.op);
    case OpKind::broadcast:
      return w.comm->broadcast(op.out, op.count, op.type, op.root);
    case OpKind::all_gather:
      return w.comm->all_gather(op.in, op.out, op.count, op.type);
    case OpKind::reduce_scatter:
      return w.comm->reduce_scatter(op.in, op.out, op.count, op.type, op.op);
    case OpKind::barrier:
      return w.comm->barrier();
  }
}

Pending run_async(detail::WorkerState& w, const Op& op) {
  w.backend->synchronize();
  if (w.host_comm) return Pending(w.host_comm->submit(op));
  switch (op.kind) {
    case OpKind::all_reduce:
      return Pending(w.comm->all_reduce_async(op.out, op.count, op.type, op.op));
    case OpKind::broadcast:
      return Pending(w.comm->broadcast_async(op.out, op.count, op.type, op.root));
    case OpKind::all_gather:
      return Pending(w.comm->all_gather_async(op.in, op.out, op.count, op.type));
    case OpKind::reduce_scatter:
      return Pending(w.comm->reduce_scatter_async(op.in, op.out, op.count, op.type, op.op));
    case OpKind::barrier:
      // The interface's barrier blocks; asynchronously it is an all-reduce of one int32.
      if (w.barrier_word.data() == nullptr) w.barrier_word = DeviceBuffer(w.backend, DType::i32, 1);
      return Pending(w.comm->all_reduce_async(w.barrier_word.data(), 1, DType::i32, ReduceOp::sum));
  }
  return Pending();
}

Op all_reduce_op(const detail::WorkerState& w, DeviceBuffer& buf, ReduceOp op) {
  check_op(op, "all_reduce");
  check_buffer(w, buf, "all_reduce", "buf");
  return Op{OpKind::all_reduce, buf.dtype(), op, 0, buf.size(), buf.data(), buf.data()};
}

Op broadcast_op(const detail::WorkerState& w, DeviceBuffer& buf, int root) {
  check_buffer(w, buf, "broadcast", "buf");
  if (root < 0 || root >= w.size) {
    throw Error(Errc::invalid_argument, "broadcast: root " + std::to_string(root) +
                                            " is not a rank of this team of " +
                                            std::to_string(w.size));
  }
  return Op{OpKind::broadcast, buf.dtype(), ReduceOp::sum, root,
            buf.size(),        buf.data(),  buf.data()};
}

Op all_gather_op(const detail::WorkerState& w, const DeviceBuffer& in, DeviceBuffer& out) {
  check_pair(w, in, out, "all_gather");
  if (out.size() / static_cast<std::size_t>(w.size) != in.size() ||
      out.size() % static_cast<std::size_t>(w.size) != 0) {
    throw Error(Errc::invalid_argument, "all_gather: out holds " + size_text(out.size()) +
                                            " but must hold team size " + std::to_string(w.size) +
                                            " x in's " + size_text(in.size()));
  }
  return Op{OpKind::all_gather, in.dtype(), ReduceOp::sum, 0, in.size(), in.data(), out.data()};
}

Op reduce_scatter_op(const detail::WorkerState& w, const DeviceBuffer& in, DeviceBuffer& out,
                     ReduceOp op) {
  check_op(op, "reduce_scatter");
  check_pair(w, in, out, "reduce_scatter");
  if (in.size() / static_cast<std::size_t>(w.size) != out.size() ||
      in.size() % static_cast<std::size_t>(w.size) != 0) {
    throw Error(Errc::invalid_argument, "reduce_scatter: in holds " + size_text(in.size()) +
                                            " but must hold team size " + std::to_string(w.size) +
                                            " x out's " + size_text(out.size()));
  }
  return Op{OpKind::reduce_scatter, in.dtype(), op, 0, out.size(), in.data(), out.data()};
}

}  // namespace

void Worker::all_reduce(DeviceBuffer& buf, ReduceOp op) {
  run_blocking(*state_, all_reduce_op(*state_, buf, op));
}
void Worker::broadcast(DeviceBuffer& buf, int root) {
  run_blocking(*state_, broadcast_op(*state_, buf, root));
}
void Worker::all_gather(const DeviceBuffer& in, DeviceBuffer& out) {
  run_blocking(*state_, all_gather_op(*state_, in, out));
}
void Worker::reduce_scatter(const DeviceBuffer& in, DeviceBuffer& out, ReduceOp op) {
  run_blocking(*state_, reduce_scatter_op(*state_, in, out, op));
}
void Worker::barrier() {
  run_blocking(*state_, Op{});
}

Pending Worker::all_reduce_async(DeviceBuffer& buf, ReduceOp op) {
  return run_async(*state_, all_reduce_op(*state_, buf, op));
}
Pending Worker::broadcast_async(DeviceBuffer& buf, int root) {
  return run_async(*state_, broadcast_op(*state_, buf, root));
}
Pending Worker::all_gather_async(const DeviceBuffer& in, DeviceBuffer& out) {
  return run_async(*state_, all_gather_op(*state_, in, out));
}
Pending Worker::reduce_scatter_async(const DeviceBuffer& in, DeviceBuffer& out, ReduceOp op) {
  return run_async(*state_, reduce_scatter_op(*state_, in, out, op));
}
Pending Worker::barrier_async() {
  return run_async(*state_, Op{});
}

}  // namespace nubo
