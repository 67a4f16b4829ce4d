// The Gloo algorithm of a collective between processes, for one set of buffers: Gloo's
// classic algorithms (AllreduceRing and the like), on buffers bound to each connection.
//
// They are used rather than Gloo's newer gloo::allreduce family: with Debian's Gloo
// (2022-05) TCP transport those wait about 4 ms per call whenever data arrives before its
// receive is posted, which made small collectives 10 to 50 times slower than AllreduceRing on
// this machine. Building one allocates scratch space (up to twice the buffer) and registers
// buffers with every connection (taking connection slots, so every process must build the
// same ones in the same order), so GlooLink keeps the last few.
#pragma once

#include <gloo/algorithm.h>
#include <gloo/context.h>

#include <cstddef>
#include <memory>

#include "nubo/dtype.hpp"
#include "parallel/collectives/op.hpp"

namespace nubo::parallel {

struct AlgoKey {
  OpKind kind;
  DType type;
  ReduceOp op;  // avg reduces as a sum: the caller divides
  int root;     // broadcast: the sending process
  std::size_t count;
  const void* in;  // all_gather: this process's block
  void* out;
  bool operator==(const AlgoKey&) const = default;
};

// all_reduce (a plain ring for two processes, a chunked ring for more), broadcast (one to
// all) or all_gather (a ring); count must fit in an int.
std::unique_ptr<gloo::Algorithm> make_algorithm(const std::shared_ptr<gloo::Context>& ctx,
                                                const AlgoKey& key);

}  // namespace nubo::parallel
