// An object uploaded while its file is still being written (pack -o s3://...): the file grows
// by appends, and each part whose bytes are final (durable(offset) says up to where) goes up in
// the background while the rest is still being made. finish() sends what is left and completes
// the multipart upload: only then does the object appear under its name.
//
// Resumable like the file it follows: a journal keeps the upload id, and a rerun asks the
// server which parts it holds (ListParts), keeping those whose ETag is the MD5 of the same
// bytes of the file and sending the others again.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transfer/file_io.hpp"
#include "transfer/journal.hpp"
#include "transfer/s3/client.hpp"

namespace nubo::s3 {

class StreamingUpload {
 public:
  // `path` is the growing file; `identity` names the job (a rerun of the same job resumes).
  StreamingUpload(Client client, ObjectUrl url, std::string path, std::uint64_t part_size,
                  const std::string& journal_path, const std::string& identity);
  ~StreamingUpload();
  StreamingUpload(const StreamingUpload&) = delete;
  StreamingUpload& operator=(const StreamingUpload&) = delete;

  // Bytes [0, offset) of `file` (the growing file, open) will not change again. The upload
  // reads through its own copy of the descriptor, so that the file may be renamed meanwhile.
  // Waits while more than kBacklogParts whole parts are final and not yet up: the writer is held
  // to the upload's pace, so that an interruption leaves little written and not uploaded.
  void durable(std::uint64_t offset, const transfer::Fd& file);
  // The file is complete at `size` (now at `path`, when it was renamed): the remaining parts,
  // then CompleteMultipartUpload.
  void finish(std::uint64_t size, const std::string& path);
  // The job stopped: the uploader stops too; with `abort_upload` the server forgets the parts.
  void stop(bool abort_upload) noexcept;

  static constexpr std::uint64_t kBacklogParts = 2;

  std::uint64_t bytes_sent() const { return sent_; }
  std::uint64_t bytes_resumed() const { return resumed_; }

 private:
  void run();  // the background uploader
  void send_part(int number, std::uint64_t size);

  Client client_;
  ObjectUrl url_;
  std::string path_;
  std::uint64_t part_size_;
  transfer::Journal journal_;
  transfer::Fd file_;
  std::string upload_id_;
  std::map<int, Part> held_;  // on the server before this run
  std::vector<Part> parts_;   // sent or kept, by number - 1
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t durable_ = 0, final_size_ = 0;
  std::uint64_t uploaded_ = 0;  // bytes [0, uploaded_) are up (parts go in order)
  bool finishing_ = false, stopping_ = false;
  int next_part_ = 1;
  std::exception_ptr failure_;
  std::uint64_t sent_ = 0, resumed_ = 0;
  std::thread thread_;
};

}  // namespace nubo::s3
