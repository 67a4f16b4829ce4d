// The Communicator (communicator.hpp) on NCCL, for teams of CUDA devices. Collectives run on
// each rank's backend stream through the CUDA plugin; libnubo watches them so that nothing
// hangs: while waiting it polls the collective's completion and ncclCommGetAsyncError, and
// when a peer fails (an NCCL error) or the timeout passes, it calls ncclCommAbort and throws.
//
// What NCCL cannot do, and nubo therefore does not claim on NCCL:
//  - name the rank that is missing (a stuck ring looks the same from every side): the timeout
//    message says so, and the rendezvous names rank 0 when its id never came;
//  - detect mismatched calls cheaply (sizes or types that differ across ranks): they hang until
//    the timeout and then fail like a missing peer.
// After an abort the communicator is unusable: every later call throws unavailable.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "device/backend/backend.hpp"
#include "nubo_plugin/cuda_plugin_abi.h"
#include "parallel/communicators/communicator.hpp"

namespace nubo::detail {

class CudaBackend;

// What NCCL needs from the team's rendezvous store to set up ranks in several processes: the
// rank-0 process publishes NCCL's 128-byte unique id, the others fetch it. Implemented by the
// team's store (file or Redis).
class RendezvousBytes {
 public:
  virtual ~RendezvousBytes() = default;
  virtual void set(const std::string& key, const std::string& bytes) = 0;
  // The bytes stored under key, waiting for them up to timeout; throws Errc::timeout when they
  // do not come (naming the key and who should have set it is the store's job).
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;
};

// Every rank in this process (one machine, one process): ncclCommInitAll over the backends,
// which must all be cuda backends of distinct GPUs; result[i] is rank i on backends[i].
std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(
    const std::vector<DeviceBackend*>& backends, std::chrono::milliseconds timeout);

// One rank of a job across processes (nubo-run): called by every rank at about the same time,
// each on its own worker thread. Rank 0 creates the unique id and set()s it under `key`; the
// others get() it. Setup that does not complete within timeout (a rank never came) is
// aborted and throws Errc::timeout on every rank that is there.
std::unique_ptr<Communicator> make_nccl_communicator(DeviceBackend& backend, int rank, int size,
                                                     RendezvousBytes& store,
                                                     std::chrono::milliseconds timeout,
                                                     const std::string& key = "nubo/nccl-id");

class NcclCommunicator final : public Communicator {
 public:
  // Takes ownership of comm. Public so tests can drive it with a fake plugin table.
  NcclCommunicator(CudaBackend& backend, nubo_cuda_comm* comm, int rank, int size,
                   std::chrono::milliseconds timeout);
  ~NcclCommunicator() override;

  // The Op's count and dtype must match on every rank: NCCL cannot check (see above).
  void run(const parallel::Op& op) override;
  std::unique_ptr<CollectiveHandle> submit(const parallel::Op& op) override;
  void* native() const override;
  void request_abort(const std::string& why) noexcept override;

  // Shared with the handles, which may be waited on from the rank's thread after the call.
  struct State;
  // For make_nccl_communicator, which waits on a nonblocking setup through it.
  const std::shared_ptr<State>& state_for_setup() const { return state_; }

 private:
  std::unique_ptr<CollectiveHandle> launch(const nubo_cuda_collective_args& args,
                                           const std::string& what);

  CudaBackend& backend_;
  std::shared_ptr<State> state_;
  int rank_, size_;
  void* barrier_word_ = nullptr;  // one int32 on the device, all-reduced by barrier()
};

}  // namespace nubo::detail
