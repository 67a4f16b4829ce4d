#include "transfer/keys/object_cipher.hpp"

#include <algorithm>
#include <limits>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::store {
namespace {

using transfer::format::kKeyBlockSize;
using transfer::format::kSealOverhead;
using transfer::format::RecordHeader;
using transfer::format::RecordType;

const std::string kScheme = "nubo-encryption";
const std::string kSchemeV1 = "aes-256-gcm-1m-v1";
const std::string kKeyBlock = "nubo-key-block";
const std::string kKmsRecord = "nubo-kms-record";
const std::string kSealedHash = "nubo-sealed-xxh3-128";
constexpr std::uint64_t kHashPlace = std::numeric_limits<std::uint64_t>::max();

RecordHeader hash_header(std::size_t size) {
  RecordHeader r;
  r.type = RecordType::index;
  r.raw_size = static_cast<std::uint32_t>(size);
  r.offset = kHashPlace;
  return r;
}

std::uint64_t block_count(std::uint64_t plain_total) {
  return std::max<std::uint64_t>(1,
                                 (plain_total + ObjectCipher::kBlock - 1) / ObjectCipher::kBlock);
}

[[noreturn]] void corrupt(const std::string& name, const std::string& what) {
  throw Error(Errc::corrupt, name + ": " + what);
}

}  // namespace

ObjectCipher ObjectCipher::create(const transfer::KeySource& keys) {
  auto e = keys.create();
  return {std::move(e.cipher), e.block, std::move(e.kms)};
}

std::vector<std::byte> ObjectCipher::saved_keys() const {
  const auto block = transfer::format::encode_key_block(block_);
  std::vector<std::byte> out(block.begin(), block.end());
  if (kms_) {
    const auto record = transfer::format::encode_kms_record(*kms_);
    out.insert(out.end(), record.begin(), record.end());
  }
  return out;
}

ObjectCipher ObjectCipher::from_saved_keys(const transfer::KeySource& keys, transfer::Bytes saved,
                                           const std::string& name) {
  const auto block =
      transfer::format::decode_key_block(saved.first(std::min(saved.size(), kKeyBlockSize)), name);
  std::optional<transfer::format::KmsKey> kms;
  if (saved.size() > kKeyBlockSize)
    kms = transfer::format::decode_kms_record(saved.subspan(kKeyBlockSize), name);
  return {keys.open(block, kms, name), block, std::move(kms)};
}

std::optional<ObjectCipher> ObjectCipher::for_object(const transfer::KeySource& keys,
                                                     const Metadata& metadata,
                                                     const std::string& name) {
  const auto scheme = metadata.find(kScheme);
  if (scheme == metadata.end()) return std::nullopt;
  if (scheme->second != kSchemeV1)
    throw Error(Errc::unsupported, name + " is encrypted as '" + scheme->second.substr(0, 64) +
                                       "', which this nubo does not know (a newer one wrote it)");
  const auto hex = metadata.find(kKeyBlock);
  std::array<std::byte, kKeyBlockSize> block{};
  if (hex == metadata.end() ||
      text::unhex(hex->second, block.data(), block.size()) != std::string::npos)
    corrupt(name, "its key block (x-amz-meta-" + kKeyBlock + ") is missing or not hexadecimal");
  std::vector<std::byte> saved(block.begin(), block.end());
  if (const auto record = metadata.find(kKmsRecord); record != metadata.end()) {
    const auto bytes = text::unbase64(record->second);
    if (!bytes || bytes->empty())
      corrupt(name, "its KMS record (x-amz-meta-" + kKmsRecord + ") is not base64");
    saved.insert(saved.end(), bytes->begin(), bytes->end());
  }
  return from_saved_keys(keys, saved, name);
}

Metadata ObjectCipher::metadata(const std::string& plain_hash) const {
  std::vector<std::byte> sealed;
  cipher_.seal(hash_header(plain_hash.size()), kHashPlace, transfer::as_bytes(plain_hash), sealed);
  const auto block = transfer::format::encode_key_block(block_);
  Metadata m{{kScheme, kSchemeV1},
             {kKeyBlock, text::hex(block.data(), block.size())},
             {kSealedHash, text::hex(sealed.data(), sealed.size())}};
  if (kms_) {
    const auto record = transfer::format::encode_kms_record(*kms_);
    m[kKmsRecord] = text::base64(record.data(), record.size());
  }
  return m;
}

std::string ObjectCipher::plain_hash(const Metadata& metadata, const std::string& name) const {
  const auto hex = metadata.find(kSealedHash);
  if (hex == metadata.end() || hex->second.size() % 2 != 0 || hex->second.size() > 256)
    corrupt(name, "its sealed checksum (x-amz-meta-" + kSealedHash + ") is missing");
  std::vector<std::byte> sealed(hex->second.size() / 2), plain;
  if (text::unhex(hex->second, sealed.data(), sealed.size()) != std::string::npos ||
      sealed.size() < kSealOverhead ||
      !cipher_.open(hash_header(sealed.size() - kSealOverhead), kHashPlace, sealed, plain))
    corrupt(name, "its sealed checksum (x-amz-meta-" + kSealedHash + ") does not authenticate");
  return {reinterpret_cast<const char*>(plain.data()), plain.size()};
}

std::uint64_t ObjectCipher::sealed_size(std::uint64_t plain) {
  return plain + block_count(plain) * kSealOverhead;
}

std::uint64_t ObjectCipher::plain_size(std::uint64_t sealed, const std::string& name) {
  const auto full = sealed / kSealedBlock, rest = sealed % kSealedBlock;
  // Every object holds one block at least, and only the last may be short (but not empty,
  // unless it is the only one).
  if ((rest == 0 && full == 0) || (rest != 0 && rest < kSealOverhead) ||
      (rest == kSealOverhead && full > 0))
    corrupt(name, "its size, " + std::to_string(sealed) +
                      " bytes, is no encrypted object's: it was cut short or extended");
  return full * kBlock + (rest ? rest - kSealOverhead : 0);
}

std::pair<std::uint64_t, std::uint64_t> ObjectCipher::sealed_range(std::uint64_t offset,
                                                                   std::uint64_t size,
                                                                   std::uint64_t plain_total) {
  const auto begin = offset / kBlock * kSealedBlock;
  if (offset + size >= plain_total) return {begin, sealed_size(plain_total)};
  return {begin, (offset + size) / kBlock * kSealedBlock};
}

RecordHeader ObjectCipher::block_header(std::uint64_t index, std::uint64_t size,
                                        std::uint64_t plain_total) {
  RecordHeader r;
  r.type = index + 1 == block_count(plain_total) ? RecordType::end : RecordType::chunk;
  r.raw_size = static_cast<std::uint32_t>(size);
  r.offset = index;
  return r;
}

void ObjectCipher::seal(transfer::Bytes plain, std::uint64_t first, std::uint64_t plain_total,
                        std::vector<std::byte>& out) const {
  out.clear();
  thread_local std::vector<std::byte> block;
  std::uint64_t index = first;
  std::size_t at = 0;
  do {
    const auto n = std::min<std::size_t>(kBlock, plain.size() - at);
    cipher_.seal(block_header(index, n, plain_total), index, plain.subspan(at, n), block,
                 transfer::ArchiveCipher::Nonce::synthetic);
    out.insert(out.end(), block.begin(), block.end());
    at += n;
    ++index;
  } while (at < plain.size());
}

void ObjectCipher::open(transfer::Bytes sealed, std::uint64_t first, std::uint64_t plain_total,
                        std::vector<std::byte>& out, const std::string& name) const {
  out.clear();
  thread_local std::vector<std::byte> block;
  std::uint64_t index = first;
  std::size_t at = 0;
  do {
    const auto n =
        std::min<std::uint64_t>(kBlock, plain_total - std::min(plain_total, index * kBlock));
    if (sealed.size() - at < n + kSealOverhead || index >= block_count(plain_total))
      corrupt(name, "block " + std::to_string(index) + " is truncated");
    if (!cipher_.open(block_header(index, n, plain_total), index,
                      sealed.subspan(at, n + kSealOverhead), block))
      corrupt(name, "block " + std::to_string(index) + " (bytes " + std::to_string(index * kBlock) +
                        " to " + std::to_string(index * kBlock + n) +
                        " of the file) does not authenticate: it was altered, moved or is from "
                        "another object; nothing of it was written");
    out.insert(out.end(), block.begin(), block.end());
    at += n + kSealOverhead;
    ++index;
  } while (at < sealed.size());
}

}  // namespace nubo::store
