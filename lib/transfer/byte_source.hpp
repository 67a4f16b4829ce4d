// What an archive is read from: a local file (open_file_source), or an object of a store read by
// ranges (store/object_source.hpp, whose open_source chooses between them by the path's scheme).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "transfer/bytes.hpp"
#include "transfer/file_io.hpp"

namespace nubo::transfer {

// How a reader that goes through an archive in order reads ahead (archive_reader.hpp's
// ReadAhead): requests of up to `window` bytes, and at most `ahead` bytes announced and not read
// yet, which bounds the memory a remote read holds.
struct Prefetch {
  std::uint64_t window = 16 << 20;
  std::uint64_t ahead = 64 << 20;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual const std::string& name() const = 0;
  virtual std::uint64_t size() const = 0;
  // Up to out.size() bytes at `offset`; fewer only at the end. Safe from several threads.
  virtual std::size_t pread(MutableBytes out, std::uint64_t offset) const = 0;
  // The local file, when it is one (a damaged archive's records are walked only there).
  virtual const Fd* file() const { return nullptr; }
  // Bytes fetched from a remote store so far (0 for a local file).
  virtual std::uint64_t bytes_fetched() const { return 0; }
  // Seconds reads spent waiting for bytes from a remote store (0 for a local file).
  virtual double seconds_waiting() const { return 0; }
  // Bytes [offset, offset + size) will be read soon, in order, by preads inside that range: a
  // remote source starts fetching them now, several ranges at once (posix_fadvise's WILLNEED,
  // for a store where each read is a round trip), and forgets a range once a read lies past it.
  // A local file ignores it.
  virtual void will_need(std::uint64_t /*offset*/, std::uint64_t /*size*/) const {}
  // The read-ahead this source wants now: a store's from the latency and bandwidth its requests
  // measured so far (store/fetch_plan.hpp), a local file's the default.
  virtual Prefetch prefetch() const { return {}; }

  // Exactly out.size() bytes, or Error(corrupt) naming `what` (the source is shorter).
  void pread_exact(MutableBytes out, std::uint64_t offset, std::string_view what) const;
};

// The local file `path`. Errors as opening it does.
std::unique_ptr<ByteSource> open_file_source(const std::string& path);

}  // namespace nubo::transfer
