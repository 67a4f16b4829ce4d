// Receiving a bundle: whole small files in one message. The members are claimed first (each must
// be a file of this send that nothing else has sent), then the payload is decoded and checked
// (XXH3-64 of it all, XXH3-128 of each member) before anything is written. Each member is
// written under its temporary name with its mode and mtime, then renamed into place: it is
// complete or absent, so bundles need no journal records.
#include <fcntl.h>

#include "nubo/error.hpp"
#include "transfer/net/session.hpp"
#include "transfer/paths.hpp"

namespace nubo::transfer::net {
namespace {

// With sync, members are flushed in groups: the writes of a group are all started before the
// first fdatasync waits, and a group bounds the descriptors held open at once.
constexpr std::size_t kSyncGroup = 64;

}  // namespace

void Session::bundle(const BundleMeta& meta, Bytes payload, StreamState& stream) {
  std::vector<File*> members;
  members.reserve(meta.members.size());
  auto release = [&] {
    std::lock_guard lock(mutex_);
    for (auto* f : members) f->finalizing = false;
  };
  {
    std::lock_guard lock(mutex_);
    try {
      std::uint64_t total = 0;
      for (const auto& m : meta.members) {
        auto& f = file_for(m.entry, "a bundle member");
        const auto& e = entries_[m.entry];
        auto where = "bundle member '" + e.path + "'";
        if (f.complete || f.finalizing || f.finalized)
          throw Error(Errc::corrupt, where + ": the file is already complete, or sent twice");
        if (!f.verified.empty() || !f.writing.empty() || f.end)
          throw Error(Errc::corrupt, where + ": the file is also being sent in chunks");
        total += e.size;  // at most 8192 sizes of at most 1 PiB: no overflow
        f.finalizing = true;
        members.push_back(&f);
      }
      if (total != meta.raw_size)
        throw Error(Errc::corrupt, "bundle: its members hold " + std::to_string(total) +
                                       " bytes, its header says " + std::to_string(meta.raw_size));
    } catch (...) {
      for (auto* f : members) f->finalizing = false;
      throw;
    }
  }

  std::vector<std::string> problems(members.size());
  try {
    auto where = "bundle of " + std::to_string(members.size()) + " files";
    auto raw = decode_checked(meta.codec, payload, meta.raw_size, meta.raw_hash, stream, where);
    // Every member's whole hash before anything is written. The bundle's checksum matched, so
    // a mismatch here is a sender that is broken or lying: the stream is refused.
    FileHasher hasher;
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      auto size = entries_[members[i]->entry].size;
      hasher.reset();
      hasher.update({raw.data() + at, size});
      if (hasher.digest() != meta.members[i].hash)
        throw Error(Errc::corrupt, "bundle member '" + entries_[members[i]->entry].path +
                                       "': content hash mismatch");
      at += size;
    }
    write_members(members, raw, stream, problems);
  } catch (...) {
    release();
    throw;
  }

  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto& f = *members[i];
    if (!problems[i].empty()) {
      reject_locked(f, problems[i]);
      continue;
    }
    f.finalized = true;
    ++totals_.files;
    totals_.bytes += entries_[f.entry].size;
  }
  last_activity_ = std::chrono::steady_clock::now();
}

void Session::write_members(const std::vector<File*>& members, Bytes raw, StreamState& stream,
                            std::vector<std::string>& problems) {
  if (!stream.target) stream.target = std::make_unique<TargetDir>(dest_);
  auto& dir = *stream.target;
  std::vector<Fd> open(kSyncGroup);
  std::uint64_t at = 0;
  for (std::size_t first = 0; first < members.size(); first += kSyncGroup) {
    auto last = std::min(members.size(), first + kSyncGroup);
    for (auto i = first; i < last; ++i) {
      const auto& e = entries_[members[i]->entry];
      auto path = full(e);
      Bytes content{raw.data() + at, e.size};
      at += e.size;
      try {
        auto fd = dir.open_file(path, temp_name(paths::leaf(path)), true);
        fd.pwrite_all(content, 0);
        fd.truncate(e.size);  // a stale temporary file of an earlier attempt may be longer
        // The mtime before the rename: the name appears complete, or not at all (see plan()).
        TargetDir::set_times_and_mode(fd, e.mtime_ns, e.mode);
        if (sync_ && e.size > 0)
          ::sync_file_range(fd.get(), 0, static_cast<off_t>(e.size), SYNC_FILE_RANGE_WRITE);
        open[i - first] = std::move(fd);
      } catch (const Error& err) {
        problems[i] = err.what();
      }
    }
    for (auto i = first; i < last; ++i) {
      auto& fd = open[i - first];
      if (!fd) continue;
      try {
        if (sync_) fd.datasync();
        fd.close();
        auto path = full(entries_[members[i]->entry]);
        dir.rename(path, temp_name(paths::leaf(path)));
      } catch (const Error& err) {
        problems[i] = err.what();
        fd = Fd();
      }
    }
  }
}

}  // namespace nubo::transfer::net
