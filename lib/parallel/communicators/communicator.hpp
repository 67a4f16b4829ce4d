// The communicator interface: collectives among the ranks of a team, on memory of the rank's
// device. There is one dispatch: a collective is an Op value (op.hpp), and every communicator
// runs it blocking (run) or hands it back in flight (submit). Implementations, all in this
// folder: HostCommunicator (shared memory between the workers of a process, plus Gloo between
// processes) for host and sim devices; NcclCommunicator for CUDA devices.
//
// Contract, for every implementation:
//  - Every rank calls the same collectives in the same order with the same count and dtype;
//    implementations detect a mismatch where it is cheap (shared memory: always; Gloo: a small
//    header exchanged with the data) and throw Errc::invalid_argument naming both sides.
//  - A collective that cannot complete (a peer died or never came) throws Errc::timeout or
//    Errc::unavailable on every surviving rank within the team's timeout, naming the missing
//    rank(s). It never hangs.
//  - all_reduce and broadcast work in place. Shared memory reduces in rank order (0, 1, ...), so
//    its results are bit-identical to a one-thread reference; Gloo and NCCL use their own
//    orders: exact for integers, within floating-point tolerance otherwise.
//  - A collective is ordered after the work the rank's device had queued before it (NCCL: on
//    the backend's stream in use). run() returns once the result is in place; after submit(),
//    the memory must not be touched until the handle's wait() returns.
#pragma once

#include <memory>
#include <string>

#include "parallel/collectives/op.hpp"

namespace nubo::detail {

class CollectiveHandle {
 public:
  virtual ~CollectiveHandle() = default;
  virtual void wait() = 0;  // rethrows the collective's failure
  virtual bool done() = 0;  // true once wait() would not block
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual void run(const parallel::Op& op) = 0;
  virtual std::unique_ptr<CollectiveHandle> submit(const parallel::Op& op) = 0;
  // The library's own communicator, for applications that call it directly: the ncclComm_t
  // on NCCL, null otherwise.
  virtual void* native() const { return nullptr; }
  // From any thread: the collective in flight and every later one fail with Errc::cancelled,
  // "cancelled because <why>". Host communicators are stopped through their group instead
  // (TeamState::abort), so this does nothing for them.
  virtual void request_abort(const std::string& why) noexcept { (void)why; }
};

}  // namespace nubo::detail
