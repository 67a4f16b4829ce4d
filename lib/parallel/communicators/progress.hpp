// The progress thread of one worker's communicator: it runs the worker's asynchronous
// collectives one after the other, in the order they were issued, so that the worker's thread
// can compute meanwhile. Every rank issues the same collectives in the same order, so each
// rank's queue meets the others' in step.
//
// A blocking collective skips the hand-over when nothing is queued: it runs on the worker's
// own thread (after the queue has drained, to keep the order), which saves a thread wake-up per
// call, the whole cost of a small collective.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "parallel/communicators/communicator.hpp"

namespace nubo::parallel {

struct ProgressJob;

class ProgressQueue {
 public:
  ProgressQueue() = default;
  // Waits for the queued jobs (each is bounded by the team's timeout), then stops the thread.
  ~ProgressQueue();
  ProgressQueue(const ProgressQueue&) = delete;
  ProgressQueue& operator=(const ProgressQueue&) = delete;

  // Queues job and returns its handle; the thread starts on first use.
  std::unique_ptr<detail::CollectiveHandle> submit(std::function<void()> job);
  // Runs job on the calling thread once every queued job has finished; rethrows its failure.
  void run_now(const std::function<void()>& job);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;  // the thread: a job arrived, or stop
  std::condition_variable idle_;  // run_now: the queue drained
  std::deque<std::shared_ptr<ProgressJob>> jobs_;
  bool busy_ = false;  // the thread is running a job
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace nubo::parallel
