// One collective call as the communicators see it: what, on which memory, and how to name it in
// messages and in the record the processes compare (links/step.hpp's Call).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "nubo/dtype.hpp"
#include "parallel/links/step.hpp"

namespace nubo::parallel {

// Values travel in the processes' call records (Gloo's header): never renumber.
enum class OpKind : std::uint8_t {
  all_reduce = 1,
  broadcast = 2,
  all_gather = 3,
  reduce_scatter = 4,
  barrier = 5,
  all_to_all = 6
};

struct Op {
  OpKind kind = OpKind::barrier;
  DType type = DType::f32;
  ReduceOp op = ReduceOp::sum;  // all_reduce, reduce_scatter
  int root = 0;                 // broadcast: the team rank that sends
  // elements per rank (all_gather: in; reduce_scatter: out; all_to_all: one block, per pair)
  std::size_t count = 0;
  const void* in = nullptr;  // all_gather, reduce_scatter, all_to_all; == out for in-place ops
  void* out = nullptr;
};

// What tells the collectives apart where calls are compared and named: a row of
// collectives.cpp's table, with the collective itself (collective.hpp).
class Collective;
struct OpTraits {
  OpKind kind;
  const char* name;
  bool reduces;     // takes a ReduceOp
  bool rooted;      // takes a root
  bool moves_data;  // has a count and a type (all but barrier)
  const Collective& (*collective)();
};
// Null for a kind no row has (a header from another program).
const OpTraits* traits_of(OpKind kind) noexcept;

const char* op_kind_name(OpKind kind) noexcept;
// "all_reduce(sum) of 1000 x f32", "broadcast from rank 2 of 10 x i64", "barrier".
std::string describe(const Op& op);
// True when two ranks' calls agree on everything but the memory.
bool same_call(const Op& a, const Op& b) noexcept;

// Collective number `seq` as the processes compare it: its record, with the fields that do not
// matter to its kind zeroed (a barrier's count, a broadcast's reduce op), so that two records
// are the same call exactly when same_call() says so; named by describe().
Call call_of(const Op& call, std::uint64_t seq) noexcept;

}  // namespace nubo::parallel
