// The parts of a multipart upload, sent from memory by a few threads while the next ones are
// made. The maker is held to the upload's pace: send() waits while `streams` parts are queued
// or on their way, so that memory stays bounded and an interruption loses little.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "transfer/store/store.hpp"

namespace nubo::store {

class PartUploader {
 public:
  // `uploaded` is told of each part the server took (on the thread that sent it, one at a
  // time), for a journal to remember it.
  PartUploader(Store& store, ObjectUrl url, std::string upload_id, int streams,
               std::function<void(const Part&)> uploaded);
  ~PartUploader();  // stop(false)
  PartUploader(const PartUploader&) = delete;
  PartUploader& operator=(const PartUploader&) = delete;

  // Queues part `number`; rethrows a failure of an earlier part.
  void send(int number, std::vector<std::byte> data);
  // Lists `part` among the upload's parts: an earlier attempt sent it, and the server holds it.
  void keep(const Part& part);
  // Waits until every queued part is up; the parts by number. Rethrows the first failure.
  std::vector<Part> finish();
  // Takes no more parts and waits for those being sent; with `drain`, sends those queued first
  // (unless one fails). Never throws.
  void stop(bool drain) noexcept;

  std::uint64_t bytes_sent() const;
  // Seconds send() and finish() waited for the store to take parts.
  double seconds_waiting() const;

 private:
  struct Queued {
    int number;
    std::vector<std::byte> data;
  };
  void run();

  Store& store_;
  ObjectUrl url_;
  std::string upload_id_;
  std::size_t streams_;
  std::function<void(const Part&)> uploaded_;
  std::mutex report_mutex_;  // uploaded_ is called by one thread at a time
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Queued> queue_;
  std::size_t sending_ = 0;
  std::vector<Part> parts_;
  std::uint64_t sent_ = 0;
  std::chrono::steady_clock::duration waited_{};
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::vector<std::thread> threads_;
};

}  // namespace nubo::store
