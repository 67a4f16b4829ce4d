// The link among the processes of a job, on host memory: it runs steps (step.hpp). In each
// process one thread (the local leader, local rank 0) runs them for all the workers of that
// process; the local group (collectives/local_group.hpp) gathers their data before and spreads
// the result after. Gloo (gloo_link.hpp), shared memory (shm_link.hpp) and the hierarchy of both
// (hierarchical_link.hpp) implement it.
#pragma once

#include <cstdint>
#include <string>

#include "parallel/links/step.hpp"

namespace nubo::parallel {

class Remote {
 public:
  virtual ~Remote() = default;
  virtual int rank() const = 0;  // this process, 0 .. size() - 1
  virtual int size() const = 0;  // processes in the job

  // `call` is the collective as the user made it (checked against the other processes' calls,
  // and named in errors); `step` is what the processes exchange for it (step.hpp), a reduce
  // bit-identical in every process (reduce.hpp's order).
  // Throws invalid_argument when the processes' calls disagree (nothing was exchanged then, and
  // the link stays usable); timeout, unavailable or cancelled when a process failed, naming it
  // (the link is then closed for good).
  virtual void run(const Call& call, const Step& step) = 0;

  // This process is giving up because of `cause` ("rank 1 failed: ..."): tell the others, and
  // close the connections so that their pending collectives fail at once instead of waiting
  // for the timeout. Never throws.
  virtual void abort(const std::string& cause) noexcept = 0;
};

}  // namespace nubo::parallel
