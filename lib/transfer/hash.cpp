#include "transfer/hash.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#define XXH_INLINE_ALL  // inlined: one copy, with the state's layout known to this file
#include <xxhash.h>

#include "common/text.hpp"
#include "transfer/file_io.hpp"

namespace nubo::transfer {

std::uint64_t hash64(Bytes data) {
  return XXH3_64bits(data.data(), data.size());
}

struct Hasher64::State {
  XXH3_state_t xxh;
};

Hasher64::Hasher64() : state_(std::make_unique<State>()) {
  XXH3_64bits_reset(&state_->xxh);
}
Hasher64::~Hasher64() = default;

void Hasher64::update(Bytes data) {
  XXH3_64bits_update(&state_->xxh, data.data(), data.size());
}

std::uint64_t Hasher64::digest() const {
  return XXH3_64bits_digest(&state_->xxh);
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Hash128 hash_on_disk(int fd, std::uint64_t size, const std::string& name) {
  FileHasher h;
  std::vector<std::byte> buffer(std::min<std::uint64_t>(4 << 20, std::max<std::uint64_t>(size, 1)));
  DataMap holes;  // file_io's hole walker: a buffer's worth of hole is hashed as zeros, unread
  for (std::uint64_t at = 0; at < size;) {
    const auto want = std::min<std::uint64_t>(buffer.size(), size - at);
    if (holes.hole(fd, at, want)) {
      h.update_zeros(want);
      at += want;
      continue;
    }
    for (const std::uint64_t stop = at + want; at < stop;) {
      auto n = ::pread(fd, buffer.data(), stop - at, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw_io("read back", name, n < 0 ? errno : EIO);
      h.update({buffer.data(), static_cast<std::size_t>(n)});
      at += static_cast<std::uint64_t>(n);
    }
  }
  return h.digest();
}

namespace {
Hash128 canonical(XXH128_hash_t h) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  Hash128 out;
  std::memcpy(out.bytes.data(), c.digest, out.bytes.size());
  return out;
}
}  // namespace

Hash128 hash128(Bytes data) {
  return canonical(XXH3_128bits(data.data(), data.size()));
}

std::string Hash128::hex() const {
  return text::hex(bytes.data(), bytes.size());
}

struct FileHasher::State {
  XXH3_state_t xxh;
};

FileHasher::FileHasher() : state_(std::make_unique<State>()) {
  reset();
}
FileHasher::~FileHasher() = default;
FileHasher::FileHasher(const FileHasher& other) : state_(std::make_unique<State>(*other.state_)) {}
FileHasher& FileHasher::operator=(const FileHasher& other) {
  if (this != &other) *state_ = *other.state_;
  return *this;
}

void FileHasher::reset() {
  XXH3_128bits_reset(&state_->xxh);
}

void FileHasher::update(Bytes data) {
  XXH3_128bits_update(&state_->xxh, data.data(), data.size());
}

void FileHasher::update_zeros(std::uint64_t count) {
  static const std::vector<std::byte> zeros(1 << 20);
  while (count > 0) {
    auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count, zeros.size()));
    update({zeros.data(), n});
    count -= n;
  }
}

Hash128 FileHasher::digest() const {
  return canonical(XXH3_128bits_digest(&state_->xxh));
}

std::uint64_t FileHasher::length() const {
  return state_->xxh.totalLen;
}

// The snapshot copies the state's fields one by one, leaving out extSecret: it points at
// xxHash's default secret in this process, and a restored state must point at this process's.
// The tag makes a snapshot from another xxHash version or layout unusable rather than wrong.
namespace {
constexpr std::uint32_t kSnapshotTag =
    (static_cast<std::uint32_t>(XXH_VERSION_NUMBER) << 12) ^ sizeof(XXH3_state_t);

template <class T>
void put_raw(std::vector<std::byte>& out, const T& v) {
  append(out, {reinterpret_cast<const std::byte*>(&v), sizeof(T)});
}
template <class T>
bool get_raw(Bytes& in, T& v) {
  if (in.size() < sizeof(T)) return false;
  std::memcpy(&v, in.data(), sizeof(T));
  in = in.subspan(sizeof(T));
  return true;
}
}  // namespace

std::vector<std::byte> FileHasher::save() const {
  const auto& s = state_->xxh;
  std::vector<std::byte> out;
  put_raw(out, kSnapshotTag);
  put_raw(out, s.acc);
  put_raw(out, s.buffer);
  put_raw(out, s.bufferedSize);
  put_raw(out, s.useSeed);
  put_raw(out, s.nbStripesSoFar);
  put_raw(out, s.totalLen);
  put_raw(out, s.nbStripesPerBlock);
  put_raw(out, s.secretLimit);
  put_raw(out, s.seed);
  return out;
}

bool FileHasher::restore(Bytes in) {
  std::uint32_t tag = 0;
  if (!get_raw(in, tag) || tag != kSnapshotTag) return false;
  XXH3_state_t s;
  XXH3_128bits_reset(&s);  // sets the default secret of this process
  bool ok = get_raw(in, s.acc) && get_raw(in, s.buffer) && get_raw(in, s.bufferedSize) &&
            get_raw(in, s.useSeed) && get_raw(in, s.nbStripesSoFar) && get_raw(in, s.totalLen) &&
            get_raw(in, s.nbStripesPerBlock) && get_raw(in, s.secretLimit) && get_raw(in, s.seed) &&
            in.empty();
  // A snapshot of this layout never holds these values; anything else is not one of ours.
  if (!ok || s.bufferedSize > sizeof(s.buffer) || s.useSeed != 0 || s.seed != 0) return false;
  state_->xxh = s;
  return true;
}

}  // namespace nubo::transfer
