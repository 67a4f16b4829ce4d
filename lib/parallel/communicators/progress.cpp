#include "parallel/communicators/progress.hpp"

namespace nubo::parallel {

// A job and its completion, shared by the queue and the handle. Waiting has no timeout of its
// own: the job is a collective, and every wait inside a collective is bounded by the team's
// timeout, so the job always finishes.
struct ProgressJob {
  std::function<void()> run;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;

  void finish(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mutex);
    error = std::move(e);
    done = true;
    cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this] { return done; });
    if (error) std::rethrow_exception(error);
  }
  bool is_done() {
    std::lock_guard<std::mutex> lock(mutex);
    return done;
  }
};

namespace {

class Handle final : public detail::CollectiveHandle {
 public:
  explicit Handle(std::shared_ptr<ProgressJob> job) : job_(std::move(job)) {}
  // A handle dropped unwaited still waits: the collective writes into the caller's buffer,
  // which must outlive it.
  ~Handle() override {
    if (waited_) return;
    try {
      job_->wait();
    } catch (...) {  // nobody asked for this error; the team's next collective reports it
    }
  }
  void wait() override {
    waited_ = true;
    job_->wait();
  }
  bool done() override { return job_->is_done(); }

 private:
  std::shared_ptr<ProgressJob> job_;
  bool waited_ = false;
};

}  // namespace

ProgressQueue::~ProgressQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<detail::CollectiveHandle> ProgressQueue::submit(std::function<void()> job) {
  auto j = std::make_shared<ProgressJob>();
  j->run = std::move(job);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(j);
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    wake_.notify_one();
  }
  return std::make_unique<Handle>(std::move(j));
}

void ProgressQueue::run_now(const std::function<void()>& job) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return jobs_.empty() && !busy_; });
  }
  job();
}

void ProgressQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop_, and nothing left to do
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      job->run();
    } catch (...) {
      error = std::current_exception();
    }
    job->run = nullptr;  // release what the job captured before anyone is told it is done
    job->finish(error);
    lock.lock();
    busy_ = false;
    if (jobs_.empty()) idle_.notify_all();
  }
}

}  // namespace nubo::parallel
