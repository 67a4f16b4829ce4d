// Encryption of archives at rest (format 2.1; docs/archive-format.md, "Encryption").
//
// The user holds a key-encryption key (KEK) in a key file. Each archive has its own random data
// key, stored in the header wrapped by the KEK (envelope encryption, the KMS pattern), next to
// the KEK's key id so that a reader can say which key it needs. Every record payload (entries,
// chunks, ends, bundles, the index) is sealed with AES-256-GCM under the data key:
//   stored payload = nonce (12, random) | ciphertext | tag (16)
// with the record's place and header fields as associated data (archive id, record offset,
// type, codec, entry, raw size, offset field). A record moved elsewhere in the archive, copied
// from another archive (another data key and archive id), altered or truncated does not
// authenticate. The record headers stay readable (sizes and structure are not secret); their
// hash field, an XXH3-64 of plaintext, is masked with a keyed pseudo-random value per record,
// so that it cannot confirm a guessed content.
//
// Why random nonces rather than nonces derived from the record's position: a resumed pack
// rewrites the records after the first source that changed, at the same offsets, with other
// content; a position-derived nonce would then repeat under the same key, which breaks GCM.
// Random 96-bit nonces are safe far beyond the records an archive can hold. Encrypted S3
// objects (s3/object_cipher.hpp) need the opposite: a resumed upload must seal the same block
// to the same bytes, so that the parts the server holds still match. They use synthetic
// nonces, an HMAC of the associated data and the payload under a key derived from the data
// key (as AES-GCM-SIV does): a nonce repeats only for the same plaintext in the same place.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/crypto.hpp"
#include "transfer/bytes.hpp"
#include "transfer/format/format.hpp"

namespace nubo::transfer {

using Key = crypto::AesKey;
using KeyId = std::array<std::byte, 16>;

// The key in a key file: 64 hexadecimal digits (what `nubo-xfer keygen` writes; whitespace
// around them is allowed) or exactly 32 raw bytes. Error(not_found) or Error(invalid_argument)
// naming the file and what is wrong with it.
Key read_key_file(const std::string& path);
// nubo::transfer::keygen (nubo/transfer.hpp) writes a key file.
// What names a key without revealing it: the first 16 bytes of HMAC-SHA256(key, "nubo key id").
KeyId key_id(const Key& kek);
std::string key_id_text(const KeyId& id);  // 32 hexadecimal digits

class ArchiveCipher {
 public:
  // A fresh data key for the new archive `archive_id` (random), and its key block (the data key
  // wrapped by `kek`). archive_keys.hpp says where the KEK comes from.
  static std::pair<ArchiveCipher, format::KeyBlock> create(
      const Key& kek, const std::array<std::byte, 16>& archive_id);
  // The data key of the archive `name` whose header holds `block`. Error(invalid_argument)
  // naming both key ids when `kek` is not the key it was made with; Error(corrupt) when the
  // block does not authenticate under the right key.
  static ArchiveCipher unwrap(const Key& kek, const format::KeyBlock& block,
                              const std::string& name);

  enum class Nonce { random, synthetic };
  // `payload` sealed for record `r` at `record_offset` (out: payload + kSealOverhead bytes).
  void seal(const format::RecordHeader& r, std::uint64_t record_offset, Bytes payload,
            std::vector<std::byte>& out, Nonce nonce = Nonce::random) const;
  // The payload of record `r` at `record_offset` from its sealed bytes; false when they do not
  // authenticate (`out` then holds nothing to use).
  bool open(const format::RecordHeader& r, std::uint64_t record_offset, Bytes sealed,
            std::vector<std::byte>& out) const;
  // The record header's hash field as stored, from the hash (and back: masking is its own
  // inverse).
  std::uint64_t mask(std::uint64_t hash, std::uint64_t record_offset) const;

 private:
  ArchiveCipher() = default;
  void derive_keys();  // the mask and nonce keys, from the data key
  std::array<std::byte, 42> associated_data(const format::RecordHeader& r,
                                            std::uint64_t record_offset) const;

  Key data_key_{};
  std::string mask_key_, nonce_key_;
  std::array<std::byte, 16> archive_id_{};
};

}  // namespace nubo::transfer
