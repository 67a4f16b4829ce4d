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

// A call as processes send it to one another to compare (Gloo's header, the shared-memory
// segment's records): a fixed layout, shared by every process of a job. `flag` is the
// sender's (Gloo: whether it has the algorithm built).
struct OpRecord {
  std::uint64_t seq;
  std::uint64_t count;
  std::int32_t root;
  std::uint8_t kind, type, op, flag;
};
static_assert(sizeof(OpRecord) == 24);
OpRecord record_of(const Op& call, std::uint64_t seq, std::uint8_t flag = 0) noexcept;
// The call a record describes, for comparison and messages; values outside the known ranges
// are kept as they are (describe() names an unknown kind as such).
Op call_of(const OpRecord& r) noexcept;
// How another process's record differs from this process's `call` (collective number `seq`):
// "is at collective #N (...)" or "called ...", or empty when they agree.
std::string difference(const Op& call, std::uint64_t seq, const OpRecord& theirs);

}  // namespace nubo::parallel
