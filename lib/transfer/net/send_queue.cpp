#include "transfer/net/send_queue.hpp"

namespace nubo::transfer::net {

void SendQueue::push(OutMsg m) {
  double fill;
  {
    std::unique_lock lock(mutex_);
    fill = static_cast<double>(items_.size()) / static_cast<double>(capacity_);
    changed_.wait(lock, [&] { return failure_ || items_.size() < capacity_; });
    if (failure_) std::rethrow_exception(failure_);
    items_.push_back(std::move(m));
    changed_.notify_all();
  }
  if (on_backlog_) on_backlog_(fill);
}

bool SendQueue::pop(OutMsg& m) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return failure_ || closed_ || !items_.empty(); });
  if (failure_ || items_.empty()) return false;
  m = std::move(items_.front());
  items_.pop_front();
  changed_.notify_all();
  return true;
}

void SendQueue::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

void SendQueue::fail(std::exception_ptr e) {
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = e;
  changed_.notify_all();
}

std::exception_ptr SendQueue::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

}  // namespace nubo::transfer::net
