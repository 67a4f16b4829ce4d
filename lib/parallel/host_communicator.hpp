// The communicator of a worker whose device memory is host memory (host and sim devices): the
// shared-memory LocalGroup of its process, plus Gloo (through the group's Remote) when the team
// spans processes. Asynchronous calls run on the worker's ProgressQueue.
#pragma once

#include <cstdint>
#include <memory>

#include "device/communicator.hpp"
#include "parallel/local_group.hpp"
#include "parallel/op.hpp"
#include "parallel/progress.hpp"

namespace nubo::parallel {

class HostCommunicator final : public detail::Communicator {
 public:
  HostCommunicator(std::shared_ptr<LocalGroup> group, int local, int rank, int size);

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::unique_ptr<detail::CollectiveHandle> all_reduce_async(void* buf, std::size_t count,
                                                             DType type, ReduceOp op) override;
  std::unique_ptr<detail::CollectiveHandle> broadcast_async(void* buf, std::size_t count,
                                                            DType type, int root) override;
  std::unique_ptr<detail::CollectiveHandle> all_gather_async(const void* in, void* out,
                                                             std::size_t count,
                                                             DType type) override;
  std::unique_ptr<detail::CollectiveHandle> reduce_scatter_async(const void* in, void* out,
                                                                 std::size_t count, DType type,
                                                                 ReduceOp op) override;
  void barrier() override { run(Op{}); }

  // Beyond the interface, for Worker: a blocking call without the hand-over to the progress
  // thread, and any call (the barrier too) asynchronously.
  void run(const Op& op);
  std::unique_ptr<detail::CollectiveHandle> submit(const Op& op);

 private:
  std::shared_ptr<LocalGroup> group_;
  int local_;
  int rank_;
  int size_;
  std::uint64_t next_seq_ = 0;  // collectives issued; only the worker's thread issues
  ProgressQueue queue_;         // last: its thread stops before the rest goes away
};

}  // namespace nubo::parallel
