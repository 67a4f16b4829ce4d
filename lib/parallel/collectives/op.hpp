// One collective call as the communicators see it: what, on which memory, and how to name it in
// messages. Shared by the shared-memory group, the Gloo link and their mismatch checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "nubo/dtype.hpp"

namespace nubo::parallel {

// Values travel in the Gloo header: never renumber.
enum class OpKind : std::uint8_t {
  all_reduce = 1,
  broadcast = 2,
  all_gather = 3,
  reduce_scatter = 4,
  barrier = 5
};

struct Op {
  OpKind kind = OpKind::barrier;
  DType type = DType::f32;
  ReduceOp op = ReduceOp::sum;  // all_reduce, reduce_scatter
  int root = 0;                 // broadcast: the team rank that sends
  std::size_t count = 0;        // elements per rank (all_gather: in; reduce_scatter: out)
  const void* in = nullptr;     // all_gather, reduce_scatter; == out for in-place ops
  void* out = nullptr;
};

const char* op_kind_name(OpKind kind) noexcept;
// "all_reduce(sum) of 1000 x f32", "broadcast from rank 2 of 10 x i64", "barrier".
std::string describe(const Op& op);
// True when two ranks' calls agree on everything but the memory.
bool same_call(const Op& a, const Op& b) noexcept;

}  // namespace nubo::parallel
