#include "transfer/store/object_source.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common/http.hpp"
#include "common/log.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"
#include "transfer/store/fetch_plan.hpp"

namespace nubo::store {
namespace {

constexpr std::uint64_t kBlock = 1 << 20;
constexpr std::size_t kBlocksKept = 8;

// Adds the time from its making to its end to `total`: a read that waits on the store.
class Waiting {
 public:
  explicit Waiting(std::atomic<std::uint64_t>& total)
      : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Waiting() {
    total_ += static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::steady_clock::now() - start_)
                                             .count());
  }
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;

 private:
  std::atomic<std::uint64_t>& total_;
  std::chrono::steady_clock::time_point start_;
};

// A few threads that fetch announced ranges, in the order announced. Each keeps its connection
// between requests (libcurl's handle is per thread), where a thread per range would open a
// connection (and, on TLS, make a handshake) for every window.
class Fetchers {
 public:
  static constexpr int kThreads = 4;
  using Fetch = std::function<std::string(std::uint64_t offset, std::uint64_t size)>;
  explicit Fetchers(Fetch fetch) : fetch_(std::move(fetch)) {
    for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { run(); });
  }
  // Ranges queued and not started are dropped (their futures report a broken promise, to no
  // one: the source that announced them is going away); those in flight are abandoned (a stalled
  // one would otherwise hold the end of the read until it timed out).
  ~Fetchers() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  Fetchers(const Fetchers&) = delete;
  Fetchers& operator=(const Fetchers&) = delete;

  std::shared_future<std::string> fetch(std::uint64_t offset, std::uint64_t size) {
    Job job{offset, size, {}};
    auto done = job.result.get_future().share();
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(job));
    }
    wake_.notify_one();
    return done;
  }

 private:
  struct Job {
    std::uint64_t offset, size;
    std::promise<std::string> result;
  };

  void run() {
    const http::CancelScope cancel(stop_);
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        job.result.set_value(fetch_(job.offset, job.size));
      } catch (...) {
        job.result.set_exception(std::current_exception());
      }
    }
  }

  Fetch fetch_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

class ObjectSource : public transfer::ByteSource {
 public:
  ObjectSource(std::string name, ObjectUrl url, std::uint64_t size, std::unique_ptr<Store> store)
      : name_(std::move(name)), url_(std::move(url)), size_(size), store_(std::move(store)) {}

  const std::string& name() const override { return name_; }
  std::uint64_t size() const override { return size_; }
  std::uint64_t bytes_fetched() const override { return fetched_; }
  double seconds_waiting() const override { return static_cast<double>(waited_ns_) * 1e-9; }

  // Announced ranges are fetched by the fetchers, several at once; ReadAhead bounds how many
  // bytes are announced and not read (and so how many requests are in flight).
  void will_need(std::uint64_t offset, std::uint64_t size) const override {
    if (size == 0 || offset >= size_) return;
    size = std::min(size, size_ - offset);
    std::lock_guard lock(mutex_);
    if (ahead_.count(offset)) return;
    ahead_.emplace(offset, Ahead{size, fetchers_.fetch(offset, size)});
  }

  // From the requests so far (the header, trailer and index reads come first); the default
  // until one has completed.
  transfer::Prefetch prefetch() const override {
    const auto link = link_.measure();
    return link ? plan_prefetch(*link, Fetchers::kThreads) : transfer::Prefetch{};
  }

  std::size_t pread(transfer::MutableBytes out, std::uint64_t offset) const override {
    if (offset >= size_) return 0;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size_ - offset));
    if (auto found = announced_range(offset, n); found.data.valid()) {
      if (found.data.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        const Waiting waiting(waited_ns_);
        if (!arrives_in_time(found)) found.data = ask_again(found);
      }
      const auto& data = found.data.get();  // a failed fetch throws here, where it was needed
      std::memcpy(out.data(), data.data() + (offset - found.offset), n);
      return n;
    }
    if (n >= kBlock) {  // a chunk: straight from the server
      const auto bytes = [&] {
        const Waiting waiting(waited_ns_);
        return fetch(offset, n);
      }();
      std::memcpy(out.data(), bytes.data(), n);
      return n;
    }
    for (std::size_t done = 0; done < n;)
      done += copy_from_block(out.data() + done, offset + done, n - done);
    return n;
  }

 private:
  struct Ahead {
    std::uint64_t size;
    std::shared_future<std::string> data;
  };
  struct Found {
    std::uint64_t offset = 0, size = 0;
    std::shared_future<std::string> data;
  };

  // Bytes from the store, timed for the link's estimate.
  std::string fetch(std::uint64_t offset, std::uint64_t size) const {
    const auto start = std::chrono::steady_clock::now();
    auto data = store_->get_range(url_, offset, size);
    link_.record(data.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    fetched_ += data.size();
    return data;
  }

  // Waits for an announced range as long as the link makes it take (hedge_after_s); false when
  // it is still not there.
  bool arrives_in_time(const Found& found) const {
    const double after = hedge_after_s(link_.measure().value_or(LinkMeasure{}), found.size);
    return found.data.wait_for(std::chrono::duration<double>(after)) == std::future_status::ready;
  }

  // A range that has not arrived in time is asked for again, here, on this thread's own
  // connection: the reader needs it next, and a stalled response would hold it until the
  // stall timed out. The one in flight is left to finish or fail; its bytes are not used.
  std::shared_future<std::string> ask_again(const Found& found) const {
    log::info(name_ + ": bytes " + std::to_string(found.offset) + "+" + std::to_string(found.size) +
              " (" + format_bytes(static_cast<double>(found.size)) +
              ") are late: asking for them again");
    std::promise<std::string> again;
    again.set_value(fetch(found.offset, found.size));
    auto data = again.get_future().share();
    std::lock_guard lock(mutex_);
    if (const auto it = ahead_.find(found.offset); it != ahead_.end()) it->second.data = data;
    return data;
  }

  // The announced range holding bytes [offset, offset + n), or one whose data is not valid.
  // Ranges that end before `offset` were passed by the reader, which reads in order: forgotten.
  Found announced_range(std::uint64_t offset, std::size_t n) const {
    std::vector<std::shared_future<std::string>> passed;  // waited for after the lock is released
    Found found;
    std::lock_guard lock(mutex_);
    auto it = ahead_.upper_bound(offset);
    if (it == ahead_.begin()) return found;
    --it;
    if (offset + n > it->first + it->second.size) return found;
    found = {it->first, it->second.size, it->second.data};
    for (auto p = ahead_.begin(); p != it;) {
      if (p->first + p->second.size <= offset) {
        passed.push_back(std::move(p->second.data));
        p = ahead_.erase(p);
      } else {
        ++p;
      }
    }
    return found;
  }

  // Copies up to `want` bytes at `at` from the block holding it (fetched when not cached; the
  // least recently used block makes room); returns how many.
  std::size_t copy_from_block(std::byte* out, std::uint64_t at, std::size_t want) const {
    const auto b = at / kBlock;
    const auto in_block = static_cast<std::size_t>(at - b * kBlock);
    auto copy = [&](const std::string& data) {
      const auto take = std::min(want, data.size() - in_block);
      std::memcpy(out, data.data() + in_block, take);
      return take;
    };
    {
      std::lock_guard lock(mutex_);
      for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
        if (it->first != b) continue;
        blocks_.splice(blocks_.begin(), blocks_, it);
        return copy(blocks_.front().second);
      }
    }
    const auto start = b * kBlock;
    auto data = [&] {
      const Waiting waiting(waited_ns_);
      return fetch(start, std::min(kBlock, size_ - start));
    }();
    std::lock_guard lock(mutex_);
    blocks_.emplace_front(b, std::move(data));
    if (blocks_.size() > kBlocksKept) blocks_.pop_back();
    return copy(blocks_.front().second);
  }

  std::string name_;
  ObjectUrl url_;
  std::uint64_t size_;
  std::unique_ptr<Store> store_;
  mutable std::atomic<std::uint64_t> fetched_{0};
  mutable std::atomic<std::uint64_t> waited_ns_{0};
  mutable std::mutex mutex_;
  mutable std::list<std::pair<std::uint64_t, std::string>> blocks_;
  mutable LinkEstimate link_;
  // Destroyed before the store and the estimate: the fetches in flight end while they exist.
  mutable Fetchers fetchers_{
      [this](std::uint64_t offset, std::uint64_t size) { return fetch(offset, size); }};
  // Declared last, so destroyed first.
  mutable std::map<std::uint64_t, Ahead> ahead_;
};

}  // namespace

std::unique_ptr<transfer::ByteSource> open_object_source(const std::string& url) {
  auto u = parse_url(url);
  if (u.is_prefix())
    throw Error(Errc::invalid_argument, url + " names no object: give the archive's key");
  auto store = open(u, Operation::unpack);
  auto info = store->head_object(u);
  if (!info) throw Error(Errc::not_found, url + " does not exist");
  return std::make_unique<ObjectSource>(url, u, info->size, std::move(store));
}

}  // namespace nubo::store

namespace nubo::transfer {

std::unique_ptr<ByteSource> open_source(const std::string& path) {
  if (store::is_url(path)) return store::open_object_source(path);
  return open_file_source(path);
}

}  // namespace nubo::transfer
