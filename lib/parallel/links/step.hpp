// What the links between processes speak: a step every process of a job runs together on host
// memory, and the call it serves as the processes compare it. A link never learns which
// collective is running (as NCCL's transports never do): each collective (collectives/) says
// which step it needs across processes, and names its call for the link's messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "nubo/dtype.hpp"

namespace nubo::parallel {

enum class StepKind : std::uint8_t {
  reduce,     // in place on `out`: `count` elements reduced in process order (reduce.hpp)
  broadcast,  // in place on `out`, from process `root`
  gather,     // `in`: this process's `count` elements; `out`: size() * count, process p's at
              // p * count; they do not overlap
  barrier,
  exchange,  // `in`: size() * count, the block for process q at q * count; `out`: size() *
             // count, the block from process q at q * count; they do not overlap
};

struct Step {
  StepKind kind = StepKind::barrier;
  DType type = DType::f32;
  ReduceOp op = ReduceOp::sum;  // reduce; avg is the sum divided by the number of processes
  int root = 0;                 // broadcast: the process that sends
  std::size_t count = 0;
  const void* in = nullptr;
  void* out = nullptr;
  std::size_t bytes() const { return count * dtype_size(type); }
  bool operator==(const Step&) const = default;
};

// The call a step serves, as processes compare it before anything is exchanged (Gloo's header,
// the shared-memory segment's records): a fixed layout, shared by every process of a job. Who
// makes it zeroes the fields that do not matter to its call, so that a link compares records
// whole without reading them. `flag` is the sender's own (Gloo: whether it has the algorithm
// built) and is never compared.
struct CallRecord {
  std::uint64_t seq;
  std::uint64_t count;
  std::int32_t root;
  std::uint8_t kind, type, op, flag;
};
static_assert(sizeof(CallRecord) == 24);

struct Call {
  CallRecord record{};
  // Names a record in messages: "all_reduce(sum) of 1000 x f32", "barrier".
  std::string (*describe)(const CallRecord&) = nullptr;

  std::uint64_t seq() const { return record.seq; }
  std::string name() const { return describe ? describe(record) : "a collective"; }
};

// How another process's record differs from this process's call: "is at collective #N (...)"
// or "called ...", or empty when they agree.
std::string difference(const Call& mine, const CallRecord& theirs);

}  // namespace nubo::parallel
