// Worker: who it is, its shard of a batch, and its collectives: the checks each makes on its
// arguments, then one dispatch of the Op to the worker's communicator. Compute, memory and
// streams are in worker_compute.cpp.
#include "device/backend/backend.hpp"
#include "nubo/error.hpp"
#include "parallel/team_state.hpp"
#include "parallel/worker_checks.hpp"

namespace nubo {
namespace {

using detail::check_buffer;
using detail::check_pair;
using detail::size_text;
using parallel::Op;
using parallel::OpKind;

void check_op(ReduceOp op, const char* what) {
  if (reduce_op_name(op) == "unknown") {
    throw Error(Errc::invalid_argument, std::string(what) + ": unknown reduce op " +
                                            std::to_string(static_cast<int>(op)) +
                                            " (use sum, avg, max or min)");
  }
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
int Worker::host_threads() const {
  return state_->backend->host_threads();
}
const std::vector<int>& Worker::cpus() const {
  return state_->cpus;
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

namespace {

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

Op all_to_all_op(const detail::WorkerState& w, const DeviceBuffer& in, DeviceBuffer& out) {
  check_pair(w, in, out, "all_to_all");
  const auto ranks = static_cast<std::size_t>(w.size);
  if (in.size() != out.size() || in.size() % ranks != 0) {
    throw Error(Errc::invalid_argument, "all_to_all: in holds " + size_text(in.size()) +
                                            " and out " + size_text(out.size()) +
                                            ", but both must hold team size " +
                                            std::to_string(w.size) + " x one block");
  }
  return Op{OpKind::all_to_all, in.dtype(), ReduceOp::sum, 0,
            in.size() / ranks,  in.data(),  out.data()};
}

}  // namespace

// The collective runs on the worker's stream, after the work queued before it: on host and sim
// that work has finished already, on CUDA the communicator queues behind it (NCCL takes the
// stream). So no synchronize() here: it would only stall the GPU.
void Worker::all_reduce(DeviceBuffer& buf, ReduceOp op) {
  auto held = state_->take();
  state_->comm->run(all_reduce_op(*state_, buf, op));
}
void Worker::broadcast(DeviceBuffer& buf, int root) {
  auto held = state_->take();
  state_->comm->run(broadcast_op(*state_, buf, root));
}
void Worker::all_gather(const DeviceBuffer& in, DeviceBuffer& out) {
  auto held = state_->take();
  state_->comm->run(all_gather_op(*state_, in, out));
}
void Worker::reduce_scatter(const DeviceBuffer& in, DeviceBuffer& out, ReduceOp op) {
  auto held = state_->take();
  state_->comm->run(reduce_scatter_op(*state_, in, out, op));
}
void Worker::all_to_all(const DeviceBuffer& in, DeviceBuffer& out) {
  auto held = state_->take();
  state_->comm->run(all_to_all_op(*state_, in, out));
}
void Worker::barrier() {
  auto held = state_->take();
  state_->comm->run(Op{});
}

Pending Worker::all_reduce_async(DeviceBuffer& buf, ReduceOp op) {
  auto held = state_->take();
  return Pending(state_->comm->submit(all_reduce_op(*state_, buf, op)));
}
Pending Worker::broadcast_async(DeviceBuffer& buf, int root) {
  auto held = state_->take();
  return Pending(state_->comm->submit(broadcast_op(*state_, buf, root)));
}
Pending Worker::all_gather_async(const DeviceBuffer& in, DeviceBuffer& out) {
  auto held = state_->take();
  return Pending(state_->comm->submit(all_gather_op(*state_, in, out)));
}
Pending Worker::reduce_scatter_async(const DeviceBuffer& in, DeviceBuffer& out, ReduceOp op) {
  auto held = state_->take();
  return Pending(state_->comm->submit(reduce_scatter_op(*state_, in, out, op)));
}
Pending Worker::all_to_all_async(const DeviceBuffer& in, DeviceBuffer& out) {
  auto held = state_->take();
  return Pending(state_->comm->submit(all_to_all_op(*state_, in, out)));
}
Pending Worker::barrier_async() {
  auto held = state_->take();
  return Pending(state_->comm->submit(Op{}));
}

}  // namespace nubo
