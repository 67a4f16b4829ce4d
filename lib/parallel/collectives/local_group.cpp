#include "parallel/collectives/local_group.hpp"

#include "nubo/units.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <thread>

#include "common/text.hpp"
#include "parallel/collectives/reduce.hpp"
#include "parallel/spin_wait.hpp"

namespace nubo::parallel {
namespace {

unsigned char* at(void* p, std::size_t bytes) {
  return static_cast<unsigned char*>(p) + bytes;
}
const unsigned char* at(const void* p, std::size_t bytes) {
  return static_cast<const unsigned char*>(p) + bytes;
}

// memcpy, except that copying nothing needs no valid pointers (an empty staging vector has none).
void copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

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
                      std::uint64_t seq) {
  throw_if_failed();
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
    throw_if_failed();
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && generation_ == generation) {
      throw_if_failed();
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
    failure_code_ = Errc::cancelled;
    failure_ = why;
  }
  cv_.notify_all();
}

void LocalGroup::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (permanent_) return;
  failed_ = false;
  failure_.clear();
  arrived_count_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), 0);
  mismatch_.clear();
  staging_ = {};
}

void LocalGroup::run(int local, const Op& op, std::uint64_t seq) {
  Lock lock(mutex_);
  throw_if_failed();
  calls_[static_cast<std::size_t>(local)] = op;
  sync(lock, local, Clock::now() + timeout_, op, seq);
  if (!mismatch_.empty()) throw Error(Errc::invalid_argument, mismatch_);
  if (remote_) {
    compute_with_remote(lock, local, op, seq);
    return;
  }
  if (op.kind == OpKind::barrier) return;
  lock.unlock();
  compute_alone(local, op);
  lock.lock();
  sync(lock, local, Clock::now() + timeout_, op, seq);  // depart
}

void LocalGroup::compute_alone(int local, const Op& op) {
  const std::size_t es = dtype_size(op.type);
  const std::size_t bytes = op.count * es;
  const auto n = static_cast<std::size_t>(size_);
  switch (op.kind) {
    case OpKind::all_reduce: {
      // One buffer's reduction is itself (avg divides by 1, exactly): nothing to read or write.
      if (n == 1) break;
      // Each worker reduces its slice of every buffer and writes it into every buffer.
      std::vector<const void*> ins(n);
      std::vector<void*> outs(n);
      for (std::size_t r = 0; r < n; ++r) ins[r] = outs[r] = calls_[r].out;
      const Slice s = slice_of(op.count, size_, local);
      reduce_ranks(op.type, op.op, ins.data(), size_, outs.data(), size_, s.begin, s.count);
      break;
    }
    case OpKind::broadcast: {
      const auto root = static_cast<std::size_t>(op.root - rank_offset_);
      if (static_cast<std::size_t>(local) != root) copy(op.out, calls_[root].out, bytes);
      break;
    }
    case OpKind::all_gather:
      for (std::size_t r = 0; r < n; ++r) copy(at(op.out, r * bytes), calls_[r].in, bytes);
      break;
    case OpKind::reduce_scatter: {
      std::vector<const void*> ins(n);
      for (std::size_t r = 0; r < n; ++r) {
        ins[r] = at(calls_[r].in, static_cast<std::size_t>(rank_offset_ + local) * bytes);
      }
      void* out = op.out;
      reduce_ranks(op.type, op.op, ins.data(), size_, &out, 1, 0, op.count);
      break;
    }
    case OpKind::barrier:
      break;
  }
}

void LocalGroup::compute_with_remote(Lock& lock, int local, const Op& op, std::uint64_t seq) {
  const std::size_t es = dtype_size(op.type);
  const std::size_t bytes = op.count * es;
  const auto n = static_cast<std::size_t>(size_);
  const int me = remote_->rank();
  // Waits that span the leader's cross-process step: that step is bounded by the timeout and
  // reports its own failure; this bound only guards against a bug.
  const auto local_deadline = [this] { return Clock::now() + timeout_; };
  const auto remote_deadline = [this] {
    return Clock::now() + 2 * timeout_ + std::chrono::seconds(5);
  };
  // The leader's cross-process step; its failure becomes the whole group's.
  const auto run_remote = [&](const Op& action) {
    lock.unlock();
    try {
      remote_->run(op, seq, action);
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
  };

  switch (op.kind) {
    case OpKind::barrier: {
      if (local == 0) run_remote(op);
      sync(lock, local, remote_deadline(), op, seq);
      return;
    }
    case OpKind::all_reduce: {
      void* lead = calls_[0].out;
      // This process's workers, then the processes (reduce.hpp says how avg is split).
      const StagedReduce stages = staged(op.op, size_ == 1);
      if (size_ > 1) {  // the process's workers reduce into the leader's buffer
        lock.unlock();
        std::vector<const void*> ins(n);
        for (std::size_t r = 0; r < n; ++r) ins[r] = calls_[r].out;
        const Slice s = slice_of(op.count, size_, local);
        reduce_ranks(op.type, stages.first, ins.data(), size_, &lead, 1, s.begin, s.count);
        lock.lock();
        sync(lock, local, local_deadline(), op, seq);
      }
      if (local == 0) {
        Op action = op;
        action.in = action.out = lead;
        action.op = stages.last;
        run_remote(action);
        if (stages.divide) {
          lock.unlock();
          divide_by(op.type, lead, op.count, team_size_);
          lock.lock();
        }
      }
      sync(lock, local, remote_deadline(), op, seq);
      if (size_ > 1) {
        lock.unlock();
        if (local != 0) copy(op.out, lead, bytes);
        lock.lock();
        sync(lock, local, local_deadline(), op, seq);
      }
      return;
    }
    case OpKind::broadcast: {
      // Ranks are process * size_ + local (every process holds size_ workers).
      const int root_proc = op.root / size_;
      const auto root_local = static_cast<std::size_t>(op.root % size_);
      void* src = root_proc == me ? calls_[root_local].out : calls_[0].out;
      if (local == 0) {
        Op action = op;
        action.root = root_proc;
        action.in = action.out = src;
        run_remote(action);
      }
      sync(lock, local, remote_deadline(), op, seq);
      if (size_ > 1) {
        lock.unlock();
        if (op.out != src) copy(op.out, src, bytes);
        lock.lock();
        sync(lock, local, local_deadline(), op, seq);
      }
      return;
    }
    case OpKind::all_gather: {
      // The process's blocks side by side (one worker: its own input), then across processes
      // into the leader's output, then copied to the others.
      void* lead = calls_[0].out;
      const void* block = op.in;
      if (size_ > 1) {
        if (local == 0) {
          try {
            staging_.assign(n * bytes, 0);
          } catch (const std::bad_alloc&) {
            fail_locked(Errc::out_of_memory, describe(op) + ": no host memory for its staging copy",
                        false);
          }
        }
        sync(lock, local, local_deadline(), op, seq);
        block = staging_.data();
        lock.unlock();
        copy(at(staging_.data(), static_cast<std::size_t>(local) * bytes), op.in, bytes);
        lock.lock();
        sync(lock, local, local_deadline(), op, seq);
      }
      if (local == 0) {
        Op action = op;
        action.count = op.count * n;
        action.in = block;
        action.out = lead;
        run_remote(action);
      }
      sync(lock, local, remote_deadline(), op, seq);
      if (size_ > 1) {
        lock.unlock();
        if (local != 0) {
          copy(op.out, lead, static_cast<std::size_t>(team_size_) * bytes);
        }
        lock.lock();
        sync(lock, local, local_deadline(), op, seq);
      }
      return;
    }
    case OpKind::reduce_scatter: {
      // The whole input is reduced across processes in a staging copy (the input is const),
      // then each worker takes its block: an all-reduce where a reduce-scatter would move
      // half the bytes, in exchange for Gloo's tuned all-reduce.
      const std::size_t total = static_cast<std::size_t>(team_size_) * op.count;
      if (local == 0) {
        try {
          staging_.assign(total * es, 0);
        } catch (const std::bad_alloc&) {
          fail_locked(Errc::out_of_memory,
                      describe(op) + ": no host memory for its " +
                          format_bytes(static_cast<double>(total * es)) + " staging copy",
                      false);
        }
      }
      sync(lock, local, local_deadline(), op, seq);
      void* stage = staging_.data();
      const StagedReduce stages = staged(op.op, size_ == 1);  // as in all_reduce
      lock.unlock();
      std::vector<const void*> ins(n);
      for (std::size_t r = 0; r < n; ++r) ins[r] = calls_[r].in;
      const Slice s = slice_of(total, size_, local);
      reduce_ranks(op.type, stages.first, ins.data(), size_, &stage, 1, s.begin, s.count);
      lock.lock();
      sync(lock, local, local_deadline(), op, seq);
      if (local == 0) {
        Op action = op;
        action.kind = OpKind::all_reduce;
        action.count = total;
        action.in = action.out = stage;
        action.op = stages.last;
        run_remote(action);
      }
      sync(lock, local, remote_deadline(), op, seq);
      lock.unlock();
      copy(op.out, at(stage, static_cast<std::size_t>(rank_offset_ + local) * bytes), bytes);
      if (stages.divide) divide_by(op.type, op.out, op.count, team_size_);
      lock.lock();
      sync(lock, local, local_deadline(), op, seq);
      return;
    }
  }
}

}  // namespace nubo::parallel
