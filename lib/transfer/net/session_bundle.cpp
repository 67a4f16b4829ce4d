// Receiving a bundle: whole small files in one message. The members are claimed first (each must
// be a file of this send that nothing else has sent), then the payload is decoded and checked
// (XXH3-64 of it all, XXH3-128 of each member carried in it) before anything is written. Each
// member is written under its temporary name with its mode and mtime, then renamed into place:
// it is complete or absent, so bundles need no journal records.
//
// A member that names a source (an earlier file of the send with the same content) is copied
// from the source's bytes in this bundle, or read back from the source's file once another
// stream has put it in place, and checked against its own XXH3-128 all the same. Sources are
// earlier entries sent in earlier (or the same) messages, so a wait always ends: the message
// that carries the source was taken by some stream before this one.
#include <fcntl.h>

#include <map>

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
  const auto n = meta.members.size();
  std::vector<File*> members;
  members.reserve(n);
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
        if (m.source != kNoSource) {
          file_for(m.source, "the source of a bundle member");
          if (entries_[m.source].size != e.size)
            throw Error(Errc::corrupt,
                        where + ": its source '" + entries_[m.source].path + "' has another size");
        } else {
          total += e.size;  // at most 8192 sizes of at most 1 PiB: no overflow
        }
        f.finalizing = true;
        f.failed = false;
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
  // On a refusal, the members not settled yet are released (the ones settled stay so).
  auto release_rest = [&] {
    std::lock_guard lock(mutex_);
    for (auto* f : members)
      if (!f->finalized && !f->failed) f->finalizing = false;
  };

  try {
    auto where = "bundle of " + std::to_string(n) + " files";
    auto raw = decode_checked(meta.codec, payload, meta.raw_size, meta.raw_hash, stream, where);
    // The members carried in the payload, and those copied from them: every hash checked before
    // anything is written. The bundle's checksum matched, so a mismatch here is a sender that
    // is broken or lying.
    std::vector<File*> carried;
    std::vector<Bytes> contents;
    std::map<std::uint32_t, std::size_t> member_of;  // entry -> its place in the bundle
    std::vector<Bytes> content_of(n);
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      member_of.emplace(meta.members[i].entry, i);
      if (meta.members[i].source != kNoSource) continue;
      const auto& e = entries_[members[i]->entry];
      content_of[i] = {raw.data() + at, e.size};
      at += e.size;
      if (hash128(content_of[i]) != meta.members[i].hash)
        throw Error(Errc::corrupt, "bundle member '" + e.path + "': content hash mismatch");
      carried.push_back(members[i]);
      contents.push_back(content_of[i]);
    }
    // A copy of a member of the same bundle: that member carries the content (just checked),
    // so their hashes must agree.
    for (const auto& m : meta.members) {
      auto it = m.source == kNoSource ? member_of.end() : member_of.find(m.source);
      if (it == member_of.end()) continue;
      const auto& source = meta.members[it->second];
      auto member = "bundle member '" + entries_[m.entry].path + "'";
      if (source.source != kNoSource)
        throw Error(Errc::corrupt, member + ": its source is a member without content");
      if (source.hash != m.hash)
        throw Error(Errc::corrupt, member + ": content hash mismatch with its source");
    }
    std::vector<std::string> problems(carried.size());
    write_members(carried, contents, stream, problems);
    {
      std::lock_guard lock(mutex_);
      settle_locked(carried, problems);
    }

    // The copies, one at a time: from this bundle, or from a file another message put in place.
    for (std::size_t i = 0; i < n; ++i) {
      const auto& m = meta.members[i];
      if (m.source == kNoSource) continue;
      std::string problem;
      Bytes content;
      if (auto it = member_of.find(m.source); it != member_of.end()) {
        content = content_of[it->second];
      } else {
        File* source;
        {
          std::lock_guard lock(mutex_);
          source = &file_for(m.source, "the source of a bundle member");
        }
        content = content_of_source(*source, m.hash, stream, problem);
      }
      std::vector<std::string> p(1, problem);
      if (problem.empty()) write_members({members[i]}, {content}, stream, p);
      std::lock_guard lock(mutex_);
      settle_locked({members[i]}, p);
    }
  } catch (...) {
    release_rest();
    throw;
  }
  std::lock_guard lock(mutex_);
  last_activity_ = std::chrono::steady_clock::now();
}

Bytes Session::content_of_source(File& source, const Hash128& hash, StreamState& stream,
                                 std::string& problem) {
  const auto& e = entries_[source.entry];
  {
    std::unique_lock lock(mutex_);
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(config_.timeout_seconds));
    if (!settled_.wait_until(lock, deadline, [&] {
          return source.finalized || source.complete || source.failed || ended_;
        }))
      throw Error(Errc::corrupt, "the source '" + e.path + "' of a bundle member never arrived");
    if (ended_ && !source.finalized && !source.complete)
      throw Error(Errc::cancelled, "the send ended while a bundle member waited for its source");
    if (!source.finalized && !source.complete) {
      problem = "its content was to be copied from '" + e.path + "', which did not arrive intact";
      return {};
    }
  }
  if (!stream.target)
    stream.target = std::make_unique<TargetDir>(config_.dest, config_.keep_special_modes);
  try {
    auto fd = stream.target->open_read(full(e));
    stream.copy.resize(e.size);
    fd.pread_exact(stream.copy, 0, "'" + fd.name() + "' (changed since it arrived?)");
  } catch (const Error& err) {
    problem = std::string("copying its source: ") + err.what();
    return {};
  }
  Bytes content{stream.copy.data(), e.size};
  if (hash128(content) != hash) {
    problem = "its source '" + e.path + "' no longer has its content (changed since it arrived?)";
    return {};
  }
  return content;
}

void Session::settle_locked(const std::vector<File*>& members,
                            const std::vector<std::string>& problems) {
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
  settled_.notify_all();
}

void Session::write_members(const std::vector<File*>& members, const std::vector<Bytes>& contents,
                            StreamState& stream, std::vector<std::string>& problems) {
  if (!stream.target)
    stream.target = std::make_unique<TargetDir>(config_.dest, config_.keep_special_modes);
  auto& dir = *stream.target;
  std::vector<Fd> open(std::min(kSyncGroup, members.size()));
  for (std::size_t first = 0; first < members.size(); first += kSyncGroup) {
    auto last = std::min(members.size(), first + kSyncGroup);
    for (auto i = first; i < last; ++i) {
      const auto& e = entries_[members[i]->entry];
      auto path = full(e);
      try {
        // Emptied: a stale temporary file of an earlier attempt may be longer.
        auto fd = dir.open_file(path, temp_name(paths::leaf(path)), TargetDir::Open::replace);
        fd.pwrite_all(contents[i], 0);
        // The mtime before the rename: the name appears complete, or not at all (see plan()).
        dir.set_times_and_mode(fd, e.mtime_ns, e.mode);
        if (config_.sync && e.size > 0)
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
        if (config_.sync) fd.datasync();
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
