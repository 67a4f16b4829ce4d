#include "transfer/s3/streaming_upload.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>

#include "common/log.hpp"
#include "nubo/error.hpp"

namespace nubo::s3 {
namespace {
constexpr std::uint16_t kUploadId = 1;  // the journal's record
}

StreamingUpload::StreamingUpload(Client client, ObjectUrl url, std::string path,
                                 std::uint64_t part_size, const std::string& journal_path,
                                 const std::string& identity)
    : client_(std::move(client)),
      url_(std::move(url)),
      path_(std::move(path)),
      part_size_(part_size),
      journal_(transfer::Journal::open(journal_path, identity)) {
  for (const auto& r : journal_.loaded())
    if (r.type == kUploadId)
      upload_id_.assign(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
  if (!upload_id_.empty()) {
    try {
      for (const auto& p : client_.list_parts(url_, upload_id_)) held_[p.number] = p;
    } catch (const Error& e) {
      if (e.code() != Errc::not_found) throw;
      upload_id_.clear();  // expired or aborted: start again
    }
  }
  if (upload_id_.empty()) {
    upload_id_ = client_.create_multipart(url_, {});
    journal_.reset();
    journal_.append(kUploadId, transfer::as_bytes(upload_id_));
    journal_.commit(true);
  }
  thread_ = std::thread([this] { run(); });
}

StreamingUpload::~StreamingUpload() {
  stop(false);
}

void StreamingUpload::durable(std::uint64_t offset, const transfer::Fd& file) {
  std::unique_lock lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
  if (!file_) {
    const int fd = ::fcntl(file.get(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) transfer::throw_io("duplicate the descriptor of", file.name(), errno);
    file_ = transfer::Fd(fd, file.name());
  }
  durable_ = std::max(durable_, offset);
  changed_.notify_all();
  changed_.wait(lock, [&] {
    return failure_ || stopping_ || durable_ <= uploaded_ + (kBacklogParts + 1) * part_size_;
  });
  if (failure_) std::rethrow_exception(failure_);
}

void StreamingUpload::finish(std::uint64_t size, const std::string& path) {
  {
    std::lock_guard lock(mutex_);
    path_ = path;  // an open descriptor follows a rename; a new one needs the new name
    final_size_ = size;
    durable_ = size;
    finishing_ = true;
    changed_.notify_all();
  }
  thread_.join();
  if (failure_) std::rethrow_exception(failure_);
  std::sort(parts_.begin(), parts_.end(),
            [](const Part& a, const Part& b) { return a.number < b.number; });
  client_.complete_multipart(url_, upload_id_, parts_);
  journal_.remove();
}

void StreamingUpload::stop(bool abort_upload) noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  if (!abort_upload || upload_id_.empty() || !journal_) return;
  try {
    client_.abort_multipart(url_, upload_id_);
    journal_.remove();
  } catch (const Error& e) {
    log::warn(std::string("aborting the upload of ") + url_.text() + ": " + e.what());
  }
}

void StreamingUpload::run() {
  try {
    for (;;) {
      int number;
      std::uint64_t size;
      {
        std::unique_lock lock(mutex_);
        // A part goes once all of it is final; the last one once the file is complete.
        const auto begin = static_cast<std::uint64_t>(next_part_ - 1) * part_size_;
        changed_.wait(lock,
                      [&] { return stopping_ || finishing_ || begin + part_size_ <= durable_; });
        if (stopping_ || (finishing_ && begin >= final_size_)) return;
        number = next_part_++;
        size = finishing_ ? std::min(part_size_, final_size_ - begin) : part_size_;
      }
      send_part(number, size);
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    failure_ = std::current_exception();
    changed_.notify_all();  // a writer waiting for the upload learns of it
  }
}

void StreamingUpload::send_part(int number, std::uint64_t size) {
  {
    // Opened here only when no checkpoint handed its descriptor over (a file finished before
    // its first checkpoint): then finish() has given its final name.
    std::lock_guard lock(mutex_);
    if (!file_) file_ = transfer::open_read(path_);
  }
  std::vector<std::byte> buffer(size);
  file_.pread_exact(buffer, static_cast<std::uint64_t>(number - 1) * part_size_,
                    file_.name() + " (changed while uploaded?)");
  const auto md5 = md5_hex(buffer);
  Part part;
  if (auto it = held_.find(number);
      it != held_.end() && it->second.size == size && it->second.etag == md5) {
    part = it->second;
    resumed_ += size;
  } else {
    part = {number, size, client_.upload_part(url_, upload_id_, number, buffer)};
    sent_ += size;
  }
  std::lock_guard lock(mutex_);
  parts_.push_back(part);
  uploaded_ = static_cast<std::uint64_t>(number - 1) * part_size_ + size;
  changed_.notify_all();
}

}  // namespace nubo::s3
