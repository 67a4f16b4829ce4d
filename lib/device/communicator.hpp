// The communicator interface: collectives among the ranks of a team, on memory of the rank's
// device. Implementations: shared memory between workers of one process (host and sim devices),
// Gloo between processes and hosts, NCCL on CUDA devices (in the CUDA plugin).
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
//  - The async forms return a handle; the buffer must not be touched until wait() returns.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "nubo/dtype.hpp"

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
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // In place: buf holds count elements in, the reduction out.
  virtual std::unique_ptr<CollectiveHandle> all_reduce_async(void* buf, std::size_t count,
                                                             DType type, ReduceOp op) = 0;
  virtual std::unique_ptr<CollectiveHandle> broadcast_async(void* buf, std::size_t count,
                                                            DType type, int root) = 0;
  // out holds size() * count elements, rank r's contribution at r * count.
  virtual std::unique_ptr<CollectiveHandle> all_gather_async(const void* in, void* out,
                                                             std::size_t count, DType type) = 0;
  // in holds size() * count elements; out receives this rank's count reduced elements.
  virtual std::unique_ptr<CollectiveHandle> reduce_scatter_async(const void* in, void* out,
                                                                 std::size_t count, DType type,
                                                                 ReduceOp op) = 0;
  virtual void barrier() = 0;

  void all_reduce(void* buf, std::size_t count, DType type, ReduceOp op) {
    all_reduce_async(buf, count, type, op)->wait();
  }
  void broadcast(void* buf, std::size_t count, DType type, int root) {
    broadcast_async(buf, count, type, root)->wait();
  }
  void all_gather(const void* in, void* out, std::size_t count, DType type) {
    all_gather_async(in, out, count, type)->wait();
  }
  void reduce_scatter(const void* in, void* out, std::size_t count, DType type, ReduceOp op) {
    reduce_scatter_async(in, out, count, type, op)->wait();
  }
};

}  // namespace nubo::detail
