#include "parallel/host_communicator.hpp"

namespace nubo::parallel {

HostCommunicator::HostCommunicator(std::shared_ptr<LocalGroup> group, int local, int rank, int size)
    : group_(std::move(group)), local_(local), rank_(rank), size_(size) {}

void HostCommunicator::run(const Op& op) {
  const std::uint64_t seq = next_seq_++;
  queue_.run_now([&] { group_->run(local_, op, seq); });
}

std::unique_ptr<detail::CollectiveHandle> HostCommunicator::submit(const Op& op) {
  const std::uint64_t seq = next_seq_++;
  return queue_.submit([group = group_, local = local_, op, seq] { group->run(local, op, seq); });
}

std::unique_ptr<detail::CollectiveHandle> HostCommunicator::all_reduce_async(void* buf,
                                                                             std::size_t count,
                                                                             DType type,
                                                                             ReduceOp op) {
  return submit(Op{OpKind::all_reduce, type, op, 0, count, buf, buf});
}

std::unique_ptr<detail::CollectiveHandle> HostCommunicator::broadcast_async(void* buf,
                                                                            std::size_t count,
                                                                            DType type, int root) {
  return submit(Op{OpKind::broadcast, type, ReduceOp::sum, root, count, buf, buf});
}

std::unique_ptr<detail::CollectiveHandle> HostCommunicator::all_gather_async(const void* in,
                                                                             void* out,
                                                                             std::size_t count,
                                                                             DType type) {
  return submit(Op{OpKind::all_gather, type, ReduceOp::sum, 0, count, in, out});
}

std::unique_ptr<detail::CollectiveHandle> HostCommunicator::reduce_scatter_async(
    const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
  return submit(Op{OpKind::reduce_scatter, type, op, 0, count, in, out});
}

}  // namespace nubo::parallel
