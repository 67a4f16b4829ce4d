#include "parallel/communicators/host_communicator.hpp"

namespace nubo::parallel {

HostCommunicator::HostCommunicator(std::shared_ptr<LocalGroup> group, int local)
    : group_(std::move(group)), local_(local) {}

void HostCommunicator::run(const Op& op) {
  const std::uint64_t seq = next_seq_++;
  queue_.run_now([&] { group_->run(local_, op, seq); });
}

std::unique_ptr<detail::CollectiveHandle> HostCommunicator::submit(const Op& op) {
  const std::uint64_t seq = next_seq_++;
  return queue_.submit([group = group_, local = local_, op, seq] { group->run(local, op, seq); });
}

}  // namespace nubo::parallel
