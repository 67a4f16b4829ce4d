#include "transfer/store/part_uploader.hpp"

#include <algorithm>

namespace nubo::store {

PartUploader::PartUploader(Store& store, ObjectUrl url, std::string upload_id, int streams,
                           std::function<void(const Part&)> uploaded)
    : store_(store),
      url_(std::move(url)),
      upload_id_(std::move(upload_id)),
      streams_(static_cast<std::size_t>(std::max(1, streams))),
      uploaded_(std::move(uploaded)) {
  for (std::size_t i = 0; i < streams_; ++i) threads_.emplace_back([this] { run(); });
}

PartUploader::~PartUploader() {
  stop(false);
}

void PartUploader::send(int number, std::vector<std::byte> data) {
  std::unique_lock lock(mutex_);
  const auto start = std::chrono::steady_clock::now();
  changed_.wait(lock, [&] { return failure_ || queue_.size() + sending_ < streams_; });
  waited_ += std::chrono::steady_clock::now() - start;
  if (failure_) std::rethrow_exception(failure_);
  queue_.push_back({number, std::move(data)});
  changed_.notify_all();
}

void PartUploader::keep(const Part& part) {
  std::lock_guard lock(mutex_);
  parts_.push_back(part);
}

std::vector<Part> PartUploader::finish() {
  std::unique_lock lock(mutex_);
  const auto start = std::chrono::steady_clock::now();
  changed_.wait(lock, [&] { return failure_ || (queue_.empty() && sending_ == 0); });
  waited_ += std::chrono::steady_clock::now() - start;
  if (failure_) std::rethrow_exception(failure_);
  auto parts = parts_;
  std::sort(parts.begin(), parts.end(),
            [](const Part& a, const Part& b) { return a.number < b.number; });
  return parts;
}

void PartUploader::stop(bool drain) noexcept {
  {
    std::unique_lock lock(mutex_);
    if (drain) changed_.wait(lock, [&] { return failure_ || (queue_.empty() && sending_ == 0); });
    stopping_ = true;
    queue_.clear();
    changed_.notify_all();
  }
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

std::uint64_t PartUploader::bytes_sent() const {
  std::lock_guard lock(mutex_);
  return sent_;
}

double PartUploader::seconds_waiting() const {
  std::lock_guard lock(mutex_);
  return std::chrono::duration<double>(waited_).count();
}

void PartUploader::run() {
  for (;;) {
    Queued part{};
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || failure_ || !queue_.empty(); });
      if (stopping_ || failure_) return;
      part = std::move(queue_.front());
      queue_.erase(queue_.begin());
      ++sending_;
    }
    try {
      const Part done = store_.upload_part(url_, upload_id_, part.number, part.data);
      if (uploaded_) {
        std::lock_guard report(report_mutex_);
        uploaded_(done);
      }
      std::lock_guard lock(mutex_);
      parts_.push_back(done);
      sent_ += done.size;
      --sending_;
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
      --sending_;
    }
    changed_.notify_all();
  }
}

}  // namespace nubo::store
