// A journal: an append-only file of small checksummed records that says which work is verified
// and durable, so that a killed job resumes where it stopped and never trusts anything else.
//
// Records are buffered by append() and made durable in batches by commit(), which the owner
// calls only after fdatasync-ing the data the records describe: a record on disk therefore
// always describes bytes that are on disk too. On open, records are read up to the first torn or
// damaged one (a crash mid-commit) and the file is cut there. A journal carries an identity (the
// job it belongs to); one with another identity is discarded, never misapplied. The file is
// locked while open, so two jobs never share one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "transfer/bytes.hpp"
#include "transfer/file_io.hpp"

namespace nubo::transfer {

class Journal {
 public:
  static constexpr std::size_t kMaxRecord = 64 << 10;

  struct Record {
    std::uint16_t type = 0;
    std::vector<std::byte> payload;
  };

  Journal() = default;
  // Opens or creates the journal at `path` for the job `identity`. Records of an earlier run
  // of the same job are in loaded(); a journal of another job is reset (discarded_other() says
  // so). Throws Error(unavailable) when another process holds it.
  static Journal open(const std::string& path, std::string_view identity);
  // The same for `name` in the folder `dir_fd` (shown as `shown`): a journal beside a download,
  // in a folder reached without following links.
  static Journal open_at(int dir_fd, const std::string& name, const std::string& shown,
                         std::string_view identity);

  const std::vector<Record>& loaded() const { return loaded_; }
  bool discarded_other() const { return discarded_other_; }
  const std::string& path() const { return fd_.name(); }
  explicit operator bool() const { return static_cast<bool>(fd_); }

  void append(std::uint16_t type, Bytes payload);
  // Writes the appended records; with `sync`, fdatasyncs them.
  void commit(bool sync);
  // Forgets every record, loaded or pending: the job starts over.
  void reset();
  // Closes and deletes the journal: the job it described is complete.
  void remove();

 private:
  static Journal from(Fd file, std::string_view identity);

  Fd fd_;
  Fd dir_;            // open_at's folder, for remove()
  std::string name_;  // open_at's name in it
  std::uint64_t end_ = 0;
  std::size_t header_size_ = 0;
  std::vector<std::byte> pending_;
  std::vector<Record> loaded_;
  bool discarded_other_ = false;
};

}  // namespace nubo::transfer
