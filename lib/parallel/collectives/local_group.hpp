// The workers of one process meeting for a collective, through shared memory: every worker's
// buffer is host memory (host and sim devices), so each one reads the others' directly.
//
// The driver of every collective (collective.hpp): a few phases separated by group barriers:
// arrive (the calls are compared; a mismatch fails every worker the same way), compute (each
// worker does an equal slice, in rank order, so results are bit-identical to a one-thread
// reference), and depart (nobody returns while another may still read its buffer). With a
// Remote (workers in several processes): stage, gather, the local leader's cross-process step,
// avg's division, spread, each between two barriers.
//
// Every barrier wait is bounded: a worker that does not come within the timeout is named in a
// timeout error, and abort() wakes everyone at once with the reason.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nubo/error.hpp"
#include "parallel/collectives/collective.hpp"
#include "parallel/collectives/op.hpp"
#include "parallel/links/remote.hpp"

namespace nubo::parallel {

class LocalGroup {
 public:
  // size workers here, the first with team rank rank_offset, in a team of team_size; remote is
  // null when this process is the whole team.
  LocalGroup(int size, int rank_offset, int team_size, std::chrono::milliseconds timeout,
             std::shared_ptr<Remote> remote);

  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Called by local worker `local` (one thread each) with its part of collective number seq.
  void run(int local, const Op& op, std::uint64_t seq);

  // Fails every pending and later collective with Errc::cancelled and `why`.
  void abort(const std::string& why);
  // Makes the group usable again after abort() or a timeout, once no worker is inside run().
  // A group whose cross-process link failed stays failed: the peers are gone.
  void reset();

 private:
  using Clock = std::chrono::steady_clock;
  using Lock = std::unique_lock<std::mutex>;

  // A group barrier; throws the group's failure, or a timeout naming who did not come.
  // `after_shared_work`: the barrier that ends a phase in which every worker read or wrote the
  // others' buffers. An abort from outside (abort()) does not release it early: a worker that
  // left then would free its buffers while another still reads them. Its own workers' failures
  // still do (a worker that failed will not come).
  void sync(Lock& lock, int local, Clock::time_point deadline, const Op& op, std::uint64_t seq,
            bool after_shared_work = false);
  [[noreturn]] void fail_locked(Errc code, std::string message, bool permanent);
  void throw_if_failed() const;
  std::string rank_list(const std::vector<int>& locals) const;

  // What the collectives see of the group now (collective.hpp).
  GroupView view();
  // The phases of `collective` when the team spans processes (collective.hpp says which).
  void run_with_remote(Lock& lock, int local, const Op& op, std::uint64_t seq,
                       const Collective& collective);
  // The leader's cross-process step; its failure becomes the whole group's.
  void run_remote(Lock& lock, const Op& op, std::uint64_t seq, const Step& step);

  const int size_;
  const int rank_offset_;
  const int team_size_;
  const std::chrono::milliseconds timeout_;
  const std::shared_ptr<Remote> remote_;

  const bool spin_;  // fewer cores than workers: spinning only delays whoever we wait for
  std::mutex mutex_;
  std::condition_variable cv_;
  // Completed barriers. Changed under mutex_; read without it while spinning.
  std::atomic<std::uint64_t> generation_{0};
  int arrived_count_ = 0;
  std::vector<char> arrived_;  // per local worker, in the barrier now filling
  std::vector<Op> calls_;      // per local worker: its current collective
  std::string mismatch_;       // set by the barrier that found the calls disagree
  bool failed_ = false;
  bool aborted_ = false;  // the failure came from abort(), from outside the group's workers
  bool permanent_ = false;
  Errc failure_code_ = Errc::ok;
  std::string failure_;
  // Across processes: reduce_scatter's whole input, all_gather's block of this process.
  std::vector<unsigned char> staging_;
};

}  // namespace nubo::parallel
