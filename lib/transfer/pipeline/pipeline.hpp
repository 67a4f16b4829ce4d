// The concurrent pipeline every transfer runs on: one thread produces jobs in order (reading),
// a pool of workers transforms them in any order (compressing or decompressing, hashing), and
// the calling thread consumes them in production order (writing). A fixed set of job slots,
// reused, bounds the memory: a job's buffers are allocated once and recycled.
//
// The first exception thrown by any stage stops the others promptly and is rethrown by run();
// that is also how the consumer cancels (it throws Error(cancelled)).
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace nubo::transfer {

template <class Job>
struct PipelineStages {
  // Fills the next job; returns false when there is none (that job is then unused).
  std::function<bool(Job&)> produce;
  // Transforms a job on a worker thread; jobs may finish out of order.
  std::function<void(Job&)> work;
  // Takes the jobs in the order produced, on the thread that called run().
  std::function<void(Job&)> consume;
};

template <class Job>
void run_pipeline(std::size_t slots, std::size_t workers, const PipelineStages<Job>& stages) {
  if (slots < 1) slots = 1;
  if (workers < 1) workers = 1;
  std::vector<Job> jobs(slots);
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::size_t> free_slots, ready;  // ready: produced, waiting for a worker
  std::map<std::uint64_t, std::size_t> done;  // sequence number -> slot, transformed
  std::vector<std::uint64_t> sequence(slots);
  std::uint64_t produced = 0;
  bool producer_finished = false;
  bool stopping = false;
  std::exception_ptr failure;
  for (std::size_t i = 0; i < slots; ++i) free_slots.push_back(i);

  auto fail = [&](std::exception_ptr e) {
    std::lock_guard lock(mutex);
    if (!failure) failure = e;
    stopping = true;
    changed.notify_all();
  };

  std::thread producer([&] {
    try {
      for (;;) {
        std::size_t slot;
        {
          std::unique_lock lock(mutex);
          changed.wait(lock, [&] { return stopping || !free_slots.empty(); });
          if (stopping) return;
          slot = free_slots.front();
          free_slots.pop_front();
        }
        bool more = stages.produce(jobs[slot]);
        std::lock_guard lock(mutex);
        if (!more) {
          free_slots.push_back(slot);
          producer_finished = true;
          changed.notify_all();
          return;
        }
        sequence[slot] = produced++;
        ready.push_back(slot);
        changed.notify_all();
      }
    } catch (...) {
      fail(std::current_exception());
    }
  });

  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      try {
        for (;;) {
          std::size_t slot;
          {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return stopping || !ready.empty() || producer_finished; });
            if (stopping || ready.empty()) return;
            slot = ready.front();
            ready.pop_front();
          }
          stages.work(jobs[slot]);
          std::lock_guard lock(mutex);
          done.emplace(sequence[slot], slot);
          changed.notify_all();
        }
      } catch (...) {
        fail(std::current_exception());
      }
    });
  }

  try {
    for (std::uint64_t next = 0;; ++next) {
      std::size_t slot;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] {
          return stopping || done.count(next) || (producer_finished && next == produced);
        });
        if (stopping || !done.count(next)) break;
        slot = done[next];
        done.erase(next);
      }
      stages.consume(jobs[slot]);
      std::lock_guard lock(mutex);
      free_slots.push_back(slot);
      changed.notify_all();
    }
  } catch (...) {
    fail(std::current_exception());
  }
  {
    std::lock_guard lock(mutex);
    stopping = true;
    changed.notify_all();
  }
  producer.join();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace nubo::transfer
