#include "parallel/collectives/local_group.hpp"

#include "nubo/units.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <thread>

#include "common/spin_wait.hpp"
#include "common/text.hpp"
#include "parallel/collectives/collective.hpp"
#include "parallel/links/reduce.hpp"

namespace nubo::parallel {
namespace {

std::string seconds_text(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

}  // namespace

LocalGroup::LocalGroup(int size, int rank_offset, int team_size, std::chrono::milliseconds timeout,
                       std::shared_ptr<Remote> remote)
    : size_(size),
      rank_offset_(rank_offset),
      team_size_(team_size),
      timeout_(timeout),
      remote_(std::move(remote)),
      spin_(static_cast<int>(std::thread::hardware_concurrency()) >= size),
      arrived_(static_cast<std::size_t>(size), 0),
      calls_(static_cast<std::size_t>(size)) {}

std::string LocalGroup::rank_list(const std::vector<int>& locals) const {
  std::vector<std::string> names;
  for (int l : locals) {
    if (names.size() == 8) {
      names.push_back("and " + std::to_string(locals.size() - 8) + " more");
      break;
    }
    names.push_back(std::to_string(rank_offset_ + l));
  }
  return (locals.size() == 1 ? "rank " : "ranks ") + text::join(names, ", ");
}

void LocalGroup::throw_if_failed() const {
  if (failed_) throw Error(failure_code_, failure_);
}

void LocalGroup::fail_locked(Errc code, std::string message, bool permanent) {
  if (!failed_) {
    failed_ = true;
    failure_code_ = code;
    failure_ = std::move(message);
  }
  permanent_ = permanent_ || permanent;
  cv_.notify_all();
  throw Error(failure_code_, failure_);
}

void LocalGroup::sync(Lock& lock, int local, Clock::time_point deadline, const Op& op,
                      std::uint64_t seq, bool after_shared_work) {
  const auto check_failed = [&] {
    if (failed_ && !(after_shared_work && aborted_)) throw Error(failure_code_, failure_);
  };
  check_failed();
  const std::uint64_t generation = generation_;
  arrived_[static_cast<std::size_t>(local)] = 1;
  if (++arrived_count_ == size_) {
    // The last to arrive completes the barrier. At the arrival barrier of a collective it also
    // compares the calls, so that every worker sees the same verdict.
    mismatch_.clear();
    std::vector<std::string> differ;
    for (int i = 1; i < size_; ++i) {
      const Op& call = calls_[static_cast<std::size_t>(i)];
      if (same_call(calls_[0], call)) continue;
      differ.push_back("rank " + std::to_string(rank_offset_ + i) + " called " + describe(call));
      if (differ.size() == 4) break;
    }
    if (!differ.empty()) {
      mismatch_ = "collective #" + std::to_string(seq) + " differs between the workers: rank " +
                  std::to_string(rank_offset_) + " called " + describe(calls_[0]) + ", " +
                  text::join(differ, ", ") +
                  "; every rank must make the same collective calls, with the same sizes and "
                  "types, in the same order";
    }
    arrived_count_ = 0;
    std::fill(arrived_.begin(), arrived_.end(), 0);
    ++generation_;
    cv_.notify_all();
    return;
  }
  // Poll before sleeping on the condition variable (spin_wait.hpp says why).
  if (spin_) {
    lock.unlock();
    spin_until([&] { return generation_.load(std::memory_order_acquire) != generation; }, [] {});
    lock.lock();
  }
  while (generation_ == generation) {
    check_failed();
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && generation_ == generation) {
      check_failed();
      std::vector<int> missing;
      for (int i = 0; i < size_; ++i) {
        if (!arrived_[static_cast<std::size_t>(i)]) missing.push_back(i);
      }
      fail_locked(Errc::timeout,
                  describe(op) + " (collective #" + std::to_string(seq) + ") timed out after " +
                      seconds_text(timeout_) + ": " + rank_list(missing) +
                      " did not join it (stuck, or it made a different number of collective calls)",
                  false);
    }
  }
  // The barrier completed: go on even if the group failed meanwhile (the failure is reported
  // at the next barrier), so that every worker reaches the same verdict for this phase.
}

void LocalGroup::abort(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_) {
    failed_ = true;
    aborted_ = true;
    failure_code_ = Errc::cancelled;
    failure_ = why;
  }
  cv_.notify_all();
}

void LocalGroup::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (permanent_) return;
  failed_ = false;
  aborted_ = false;
  failure_.clear();
  arrived_count_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), 0);
  mismatch_.clear();
  staging_ = {};
}

GroupView LocalGroup::view() {
  GroupView g;
  g.size = size_;
  g.rank_offset = rank_offset_;
  g.team_size = team_size_;
  g.process = remote_ ? remote_->rank() : 0;
  g.calls = &calls_;
  g.staging = staging_.data();
  return g;
}

void LocalGroup::run(int local, const Op& op, std::uint64_t seq) {
  Lock lock(mutex_);
  throw_if_failed();
  calls_[static_cast<std::size_t>(local)] = op;
  sync(lock, local, Clock::now() + timeout_, op, seq);
  if (!mismatch_.empty()) throw Error(Errc::invalid_argument, mismatch_);
  const Collective& collective = collective_of(op.kind);
  if (remote_) {
    run_with_remote(lock, local, op, seq, collective);
    return;
  }
  if (!traits_of(op.kind)->moves_data) return;  // the arrival barrier was all of it
  const GroupView g = view();
  lock.unlock();
  collective.alone(g, local, op);
  lock.lock();
  sync(lock, local, Clock::now() + timeout_, op, seq, true);  // depart
  throw_if_failed();  // an abort during the work: reported once no one reads the buffers
}

void LocalGroup::run_with_remote(Lock& lock, int local, const Op& op, std::uint64_t seq,
                                 const Collective& collective) {
  // Waits that span the leader's cross-process step: that step is bounded by the timeout and
  // reports its own failure; this bound only guards against a bug.
  const auto local_deadline = [this] { return Clock::now() + timeout_; };
  const auto remote_deadline = [this] {
    return Clock::now() + 2 * timeout_ + std::chrono::seconds(5);
  };
  // A phase every local worker does its share of, outside the lock, then a group barrier.
  const auto phase = [&](auto&& work) {
    const GroupView g = view();
    lock.unlock();
    work(g);
    lock.lock();
    sync(lock, local, local_deadline(), op, seq, true);
  };
  // avg in two stages: this process's workers, then the processes (reduce.hpp's staged()).
  const StagedReduce stages = staged(op.op, size_ == 1);

  if (const std::size_t bytes = collective.staging_bytes(view(), op); bytes > 0) {
    if (local == 0) {
      try {
        staging_.assign(bytes, 0);
      } catch (const std::bad_alloc&) {
        fail_locked(Errc::out_of_memory,
                    describe(op) + ": no host memory for its " +
                        format_bytes(static_cast<double>(bytes)) + " staging copy",
                    false);
      }
    }
    sync(lock, local, local_deadline(), op, seq);
  }
  if (collective.gathers(view()))
    phase([&](const GroupView& g) { collective.gather(g, local, op, stages.first); });
  if (local == 0) run_remote(lock, op, seq, collective.action(view(), op, stages.last));
  sync(lock, local, remote_deadline(), op, seq);
  if (traits_of(op.kind)->reduces && stages.divide) {
    phase([&](const GroupView& g) {
      const Region r = collective.reduced(g, op);
      const Slice s = slice_of(r.count, size_, local);
      divide_by(op.type, byte_at(r.data, s.begin * dtype_size(op.type)), s.count, team_size_);
    });
  }
  if (collective.spreads(view()))
    phase([&](const GroupView& g) { collective.spread(g, local, op); });
}

void LocalGroup::run_remote(Lock& lock, const Op& op, std::uint64_t seq, const Step& step) {
  lock.unlock();
  try {
    remote_->run(call_of(op, seq), step);
  } catch (const Error& e) {
    lock.lock();
    fail_locked(e.code(), e.what(), e.code() != Errc::invalid_argument);
  } catch (const std::bad_alloc&) {
    lock.lock();
    fail_locked(Errc::out_of_memory, describe(op) + ": out of memory", true);
  } catch (const std::exception& e) {
    lock.lock();
    fail_locked(Errc::internal, describe(op) + ": " + e.what(), true);
  }
  lock.lock();
}

}  // namespace nubo::parallel
