#include "transfer/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nubo/error.hpp"
#include "transfer/hash.hpp"

namespace nubo::transfer {
namespace {

constexpr char kMagic[8] = {'N', 'U', 'B', 'O', 'J', 'R', 'N', '1'};
constexpr std::size_t kRecordOverhead = 8 + 8;  // length+type before, checksum after

std::vector<std::byte> encode_header(std::string_view identity) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put_bytes({reinterpret_cast<const std::byte*>(kMagic), sizeof kMagic});
  w.put<std::uint32_t>(static_cast<std::uint32_t>(identity.size()));
  w.put_bytes(as_bytes(identity));
  w.put<std::uint64_t>(hash64(out));
  return out;
}

}  // namespace

Journal Journal::open(const std::string& path, std::string_view identity) {
  return from(open_write(path, 0600), identity);
}

Journal Journal::open_at(int dir_fd, const std::string& name, const std::string& shown,
                         std::string_view identity) {
  auto j = from(open_write(name, 0600, dir_fd, shown), identity);
  const int dup = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) throw_io("keep the folder of", shown, errno);
  j.dir_ = Fd(dup, shown);
  j.name_ = name;
  return j;
}

Journal Journal::from(Fd file, std::string_view identity) {
  if (identity.size() > kMaxRecord) throw Error(Errc::internal, "journal identity too long");
  const auto path = file.name();
  Journal j;
  j.fd_ = std::move(file);
  if (::flock(j.fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      throw Error(Errc::unavailable, path +
                                         ": another nubo process is working on this job; "
                                         "wait for it or stop it first");
    }
    throw_io("lock", path, errno);
  }
  auto header = encode_header(identity);
  j.header_size_ = header.size();
  auto size = j.fd_.size();

  // The whole journal is read at once; its size is bounded by what the jobs append (a record per
  // checkpoint or file), but a damaged one is never trusted to say how much to allocate.
  std::vector<std::byte> data(static_cast<std::size_t>(std::min<std::uint64_t>(size, 1ull << 30)));
  data.resize(j.fd_.pread(data, 0));
  if (data.size() < header.size() || std::memcmp(data.data(), header.data(), header.size()) != 0) {
    j.discarded_other_ = !data.empty();
    j.fd_.truncate(0);
    j.fd_.pwrite_all(header, 0);
    j.end_ = header.size();
    return j;
  }
  std::size_t pos = header.size();
  while (data.size() - pos >= kRecordOverhead) {
    auto len = get_le<std::uint32_t>(data.data() + pos);
    auto type = get_le<std::uint16_t>(data.data() + pos + 4);
    if (len > kMaxRecord || data.size() - pos - kRecordOverhead < len) break;
    auto body = Bytes(data).subspan(pos, 8 + len);
    if (get_le<std::uint64_t>(data.data() + pos + 8 + len) != hash64(body)) break;
    auto payload = body.subspan(8);
    j.loaded_.push_back({type, {payload.begin(), payload.end()}});
    pos += kRecordOverhead + len;
  }
  j.end_ = pos;
  if (pos != size) j.fd_.truncate(pos);  // a torn tail from a crash mid-commit
  return j;
}

void Journal::append(std::uint16_t type, Bytes payload) {
  if (payload.size() > kMaxRecord) throw Error(Errc::internal, "journal record too large");
  auto at = pending_.size();
  pending_.resize(at + 8);
  put_le<std::uint32_t>(pending_.data() + at, static_cast<std::uint32_t>(payload.size()));
  put_le<std::uint16_t>(pending_.data() + at + 4, type);
  transfer::append(pending_, payload);
  auto body = Bytes(pending_).subspan(at);
  auto check = hash64(body);
  pending_.resize(pending_.size() + 8);
  put_le<std::uint64_t>(pending_.data() + pending_.size() - 8, check);
}

void Journal::commit(bool sync) {
  if (!fd_) return;
  if (!pending_.empty()) {
    fd_.pwrite_all(pending_, end_);
    end_ += pending_.size();
    pending_.clear();
  }
  if (sync) fd_.datasync();
}

void Journal::reset() {
  if (!fd_) return;
  pending_.clear();
  loaded_.clear();
  auto header_end = static_cast<std::uint64_t>(header_size_);
  fd_.truncate(header_end);
  end_ = header_end;
}

void Journal::remove() {
  if (!fd_) return;
  auto path = fd_.name();
  if (dir_) {
    if (::unlinkat(dir_.get(), name_.c_str(), 0) != 0 && errno != ENOENT)
      throw_io("remove", path, errno);
  } else {
    remove_file(path);
  }
  fd_.close();
}

}  // namespace nubo::transfer
