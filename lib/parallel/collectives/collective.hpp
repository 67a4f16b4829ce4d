// One collective as the local group (local_group.hpp) runs it among the workers of a process.
// The group is the driver: it compares the calls, holds the barriers between phases, handles
// avg (reduce.hpp's staged(): the first stage sums, the last sums or averages, and a division
// follows where needed), and, across processes, has the local leader run the cross-process
// action. A collective says only what is its own:
//  - alone: this process is the whole team; each worker does its share, reading the others'
//    buffers directly (equal slices, in rank order, for bit-identical results);
//  - across processes: what the leader needs staged, how the workers gather into what it
//    sends, the step the processes run (links/step.hpp: the links' own vocabulary, so that no
//    link knows which collective runs), what avg divides afterwards, and how the result is
//    spread back to every worker.
// A new collective is a file here with its Collective, and a row of collectives.cpp's table.
#pragma once

#include <cstddef>
#include <vector>

#include "parallel/collectives/op.hpp"
#include "parallel/links/step.hpp"

namespace nubo::parallel {

// What a phase sees of the group.
struct GroupView {
  int size = 0;         // workers in this process
  int rank_offset = 0;  // the team rank of local worker 0
  int team_size = 0;
  int process = 0;                   // this process's rank among the processes (across only)
  const std::vector<Op>* calls{};    // every local worker's call
  unsigned char* staging = nullptr;  // staging_bytes() of the leader's, when asked for
  const Op& call(int local) const { return (*calls)[static_cast<std::size_t>(local)]; }
};

// Elements [0, count) at `data`: the region avg divides once the last stage is done.
struct Region {
  void* data = nullptr;
  std::size_t count = 0;
};

class Collective {
 public:
  virtual ~Collective() = default;

  // This process is the whole team: worker `local`'s share.
  virtual void alone(const GroupView& g, int local, const Op& op) const = 0;

  // Across processes. Bytes of staging the leader allocates first (0: none).
  virtual std::size_t staging_bytes(const GroupView& /*g*/, const Op& /*op*/) const { return 0; }
  // Whether there is a gather phase, and worker `local`'s share of it; `first`: the first
  // stage's reduce op.
  virtual bool gathers(const GroupView& /*g*/) const { return false; }
  virtual void gather(const GroupView& /*g*/, int /*local*/, const Op& /*op*/,
                      ReduceOp /*first*/) const {}
  // The step the leader runs across processes; `last`: the last stage's reduce op.
  virtual Step action(const GroupView& g, const Op& op, ReduceOp last) const = 0;
  // The region avg divides by the team size, for the collectives that reduce.
  virtual Region reduced(const GroupView& /*g*/, const Op& /*op*/) const { return {}; }
  // Whether there is a spread phase, and worker `local`'s share of it.
  virtual bool spreads(const GroupView& /*g*/) const { return false; }
  virtual void spread(const GroupView& /*g*/, int /*local*/, const Op& /*op*/) const {}
};

// The collective of `kind` (collectives.cpp's table).
const Collective& collective_of(OpKind kind);

// Each collective's, defined in its own file.
const Collective& all_reduce_collective();
const Collective& broadcast_collective();
const Collective& all_gather_collective();
const Collective& reduce_scatter_collective();
const Collective& barrier_collective();
const Collective& all_to_all_collective();

// A step of `kind` over the call's type, op, root, count and memory, for an action to adjust.
Step step_of(StepKind kind, const Op& op);

// Pointer arithmetic on byte buffers, and a memcpy that copies nothing without valid pointers
// (an empty staging vector has none).
inline unsigned char* byte_at(void* p, std::size_t bytes) {
  return static_cast<unsigned char*>(p) + bytes;
}
inline const unsigned char* byte_at(const void* p, std::size_t bytes) {
  return static_cast<const unsigned char*>(p) + bytes;
}
void copy_bytes(void* dst, const void* src, std::size_t bytes);

}  // namespace nubo::parallel
