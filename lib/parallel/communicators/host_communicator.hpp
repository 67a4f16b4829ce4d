// The communicator of a worker whose device memory is host memory (host and sim devices): the
// shared-memory LocalGroup of its process, plus Gloo (through the group's Remote) when the team
// spans processes. Asynchronous calls run on the worker's ProgressQueue; a blocking call skips
// the hand-over when nothing is queued (progress.hpp).
#pragma once

#include <cstdint>
#include <memory>

#include "parallel/collectives/local_group.hpp"
#include "parallel/communicators/communicator.hpp"
#include "parallel/communicators/progress.hpp"

namespace nubo::parallel {

class HostCommunicator final : public detail::Communicator {
 public:
  HostCommunicator(std::shared_ptr<LocalGroup> group, int local);

  void run(const Op& op) override;
  std::unique_ptr<detail::CollectiveHandle> submit(const Op& op) override;

 private:
  std::shared_ptr<LocalGroup> group_;
  int local_;
  std::uint64_t next_seq_ = 0;  // collectives issued; only the worker's thread issues
  ProgressQueue queue_;         // last: its thread stops before the rest goes away
};

}  // namespace nubo::parallel
