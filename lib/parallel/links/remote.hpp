// Collectives among the processes of a job, on host memory. In each process one thread (the
// local leader, local rank 0) makes the calls for all the workers of that process; the local
// group (local_group.hpp) gathers their data before and spreads the result after. GlooLink
// (gloo_link.hpp) is the implementation.
#pragma once

#include <cstdint>
#include <string>

#include "parallel/collectives/op.hpp"

namespace nubo::parallel {

class Remote {
 public:
  virtual ~Remote() = default;
  virtual int rank() const = 0;  // this process, 0 .. size() - 1
  virtual int size() const = 0;  // processes in the job

  // `call` is the collective as the user made it (checked against the other processes' calls,
  // and named in errors); `action` is what the processes exchange for it:
  //  - all_reduce: in place on action.out, action.count elements, reduced in process order
  //    (reduce.hpp's rules: bit-identical in every process); avg is the sum divided by the
  //    number of processes;
  //  - broadcast: in place on action.out from process action.root;
  //  - all_gather: action.in holds this process's action.count elements, action.out receives
  //    size() * action.count (process p's at p * action.count); they do not overlap;
  //  - barrier.
  // Throws invalid_argument when the processes' calls disagree (nothing was exchanged then, and
  // the link stays usable); timeout, unavailable or cancelled when a process failed, naming it
  // (the link is then closed for good).
  virtual void run(const Op& call, std::uint64_t seq, const Op& action) = 0;

  // This process is giving up because of `cause` ("rank 1 failed: ..."): tell the others, and
  // close the connections so that their pending collectives fail at once instead of waiting
  // for the timeout. Never throws.
  virtual void abort(const std::string& cause) noexcept = 0;
};

}  // namespace nubo::parallel
