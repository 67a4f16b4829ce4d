#include "transfer/keys/archive_cipher.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "common/small_file.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/file_io.hpp"

namespace nubo::transfer {

namespace {

constexpr std::size_t kMaxKeyFile = 4096;
constexpr char kWrapLabel[] = "nubo archive key 1";

std::string as_key_string(const Key& k) {
  return {reinterpret_cast<const char*>(k.data()), k.size()};
}

// What the wrapping of a data key authenticates besides the key: the archive and the KEK.
std::array<std::byte, sizeof kWrapLabel + 32> wrap_aad(const format::KeyBlock& b) {
  std::array<std::byte, sizeof kWrapLabel + 32> aad{};
  std::memcpy(aad.data(), kWrapLabel, sizeof kWrapLabel);
  std::memcpy(aad.data() + sizeof kWrapLabel, b.archive_id.data(), 16);
  std::memcpy(aad.data() + sizeof kWrapLabel + 16, b.key_id.data(), 16);
  return aad;
}

}  // namespace

Key read_key_file(const std::string& path) {
  const auto file = files::read_small_file_if_present(path, kMaxKeyFile, "key file");
  if (!file) {
    throw Error(Errc::not_found,
                "key file '" + path + "' does not exist (nubo-xfer keygen " + path + " makes one)");
  }
  if ((file->mode & 077) != 0)
    log::warn("key file '" + path + "' can be read by other users (chmod 600 " + path + ")");
  const auto& bytes = file->bytes;
  Key key{};
  if (bytes.size() == key.size()) {
    std::memcpy(key.data(), bytes.data(), key.size());
    return key;
  }
  std::string text = bytes;
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  text = first == std::string::npos ? "" : text.substr(first, last - first + 1);
  if (text.size() != 2 * key.size())
    throw Error(Errc::invalid_argument,
                "key file '" + path +
                    "' is not a key: it must hold 64 hexadecimal digits (as "
                    "nubo-xfer keygen writes) or 32 raw bytes; it holds " +
                    std::to_string(bytes.size()) + " bytes");
  if (const auto bad = text::unhex(text, key.data(), key.size()); bad != std::string::npos)
    throw Error(Errc::invalid_argument, "key file '" + path + "': character " +
                                            std::to_string(bad + 1) +
                                            " is not a hexadecimal digit");
  return key;
}

void keygen(const std::string& path) {
  Key key{};
  crypto::random_bytes(key);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST)
      throw Error(Errc::invalid_argument,
                  "'" + path +
                      "' exists: a key file is never replaced (its archives would be "
                      "lost with it); remove it first if that is what you mean");
    throw_io("create the key file", path, errno);
  }
  Fd file(fd, path);
  file.write_all(as_bytes(text::hex(key.data(), key.size()) + "\n"));
  file.datasync();
  file.close();
}

KeyId key_id(const Key& kek) {
  static constexpr char kLabel[] = "nubo key id";
  const auto mac = crypto::hmac_sha256(
      as_key_string(kek), {reinterpret_cast<const std::byte*>(kLabel), sizeof kLabel - 1});
  KeyId id{};
  std::memcpy(id.data(), mac.data(), id.size());
  return id;
}

std::string key_id_text(const KeyId& id) {
  return text::hex(id.data(), id.size());
}

std::pair<ArchiveCipher, format::KeyBlock> ArchiveCipher::create(
    const Key& kek, const std::array<std::byte, 16>& archive_id) {
  ArchiveCipher c;
  crypto::random_bytes(c.data_key_);
  c.archive_id_ = archive_id;
  format::KeyBlock b;
  b.archive_id = c.archive_id_;
  b.key_id = key_id(kek);
  crypto::random_bytes(b.nonce);
  crypto::aes256_gcm_seal(kek, b.nonce, wrap_aad(b), c.data_key_, b.wrapped);
  c.derive_keys();
  return {std::move(c), b};
}

ArchiveCipher ArchiveCipher::unwrap(const Key& kek, const format::KeyBlock& b,
                                    const std::string& name) {
  const auto id = key_id(kek);
  if (id != b.key_id)
    throw Error(Errc::invalid_argument, name + " is encrypted with key " + key_id_text(b.key_id) +
                                            "; the key given is key " + key_id_text(id));
  ArchiveCipher c;
  if (!crypto::aes256_gcm_open(kek, b.nonce, wrap_aad(b), b.wrapped, c.data_key_))
    throw Error(Errc::corrupt, name + ": the key block does not authenticate: it was altered");
  c.archive_id_ = b.archive_id;
  c.derive_keys();
  return c;
}

void ArchiveCipher::derive_keys() {
  const auto mask = crypto::hmac_sha256(as_key_string(data_key_), as_bytes("nubo hash mask"));
  mask_key_.assign(reinterpret_cast<const char*>(mask.data()), mask.size());
  const auto nonce = crypto::hmac_sha256(as_key_string(data_key_), as_bytes("nubo nonce"));
  nonce_key_.assign(reinterpret_cast<const char*>(nonce.data()), nonce.size());
}

std::array<std::byte, 42> ArchiveCipher::associated_data(const format::RecordHeader& r,
                                                         std::uint64_t record_offset) const {
  std::array<std::byte, 42> aad{};
  std::memcpy(aad.data(), archive_id_.data(), archive_id_.size());
  put_le<std::uint64_t>(aad.data() + 16, record_offset);
  aad[24] = static_cast<std::byte>(r.type);
  aad[25] = static_cast<std::byte>(r.codec);
  put_le<std::uint32_t>(aad.data() + 26, r.entry);
  put_le<std::uint32_t>(aad.data() + 30, r.raw_size);
  put_le<std::uint64_t>(aad.data() + 34, r.offset);
  return aad;
}

void ArchiveCipher::seal(const format::RecordHeader& r, std::uint64_t record_offset, Bytes payload,
                         std::vector<std::byte>& out, Nonce kind) const {
  out.resize(payload.size() + format::kSealOverhead);
  const auto aad = associated_data(r, record_offset);
  crypto::GcmNonce nonce{};
  if (kind == Nonce::synthetic) {
    std::memcpy(nonce.data(), crypto::hmac_sha256(nonce_key_, {aad, payload}).data(), nonce.size());
  } else {
    crypto::random_bytes(nonce);
  }
  std::memcpy(out.data(), nonce.data(), nonce.size());
  crypto::aes256_gcm_seal(data_key_, nonce, aad, payload, std::span(out).subspan(nonce.size()));
}

bool ArchiveCipher::open(const format::RecordHeader& r, std::uint64_t record_offset, Bytes sealed,
                         std::vector<std::byte>& out) const {
  if (sealed.size() < format::kSealOverhead) return false;
  crypto::GcmNonce nonce{};
  std::memcpy(nonce.data(), sealed.data(), nonce.size());
  out.resize(sealed.size() - format::kSealOverhead);
  return crypto::aes256_gcm_open(data_key_, nonce, associated_data(r, record_offset),
                                 sealed.subspan(nonce.size()), out);
}

std::uint64_t ArchiveCipher::mask(std::uint64_t hash, std::uint64_t record_offset) const {
  std::array<std::byte, 8> at{};
  put_le<std::uint64_t>(at.data(), record_offset);
  const auto m = crypto::hmac_sha256(mask_key_, at);
  return hash ^ get_le<std::uint64_t>(m.data());
}

}  // namespace nubo::transfer
