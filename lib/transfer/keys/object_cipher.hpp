// Encryption of plain objects at rest (`cp --encrypt`; docs/s3.md, "Encryption").
//
// The same envelope as encrypted archives (archive_cipher.hpp): a random data key per object,
// wrapped by the user's key (the KEK: a key file's, or KMS's, archive_keys.hpp), its key block (and
// KMS record) kept in the object's metadata. The object's
// bytes are its file cut into blocks of 1 MiB, each sealed with AES-256-GCM:
//   sealed block = nonce (12) | ciphertext | tag (16)
// and bound as associated data to the object (its random id), its index, its size, and whether
// it is the last block. A block moved, copied from another object, altered, or an object cut
// short or extended at a block boundary does not authenticate. The file's XXH3-128 travels
// sealed too (x-amz-meta-nubo-sealed-xxh3-128), so that it cannot confirm a guessed content.
//
// Nonces are synthetic (archive_cipher.hpp), so that a resumed upload under the data key its
// journal kept seals the same parts to the same bytes and the parts the server holds still
// match their MD5. Ranged reads stay possible: block i starts at i * (1 MiB + 28).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transfer/keys/archive_keys.hpp"
#include "transfer/store/store.hpp"

namespace nubo::store {

class ObjectCipher {
 public:
  static constexpr std::uint64_t kBlock = 1 << 20;  // plaintext bytes per sealed block
  static constexpr std::uint64_t kSealedBlock = kBlock + transfer::format::kSealOverhead;

  // A fresh data key for a new object. Precondition: keys.encrypts().
  static ObjectCipher create(const transfer::KeySource& keys);
  // The cipher whose saved_keys() are `saved` (an upload's journal keeps them to resume).
  static ObjectCipher from_saved_keys(const transfer::KeySource& keys, transfer::Bytes saved,
                                      const std::string& name);
  // The cipher of the object `name` that carries `metadata`: none when the object is not
  // encrypted. Error(invalid_argument) when it is and what was given is not its key (naming the
  // key it needs); Error(corrupt) when its metadata was altered.
  static std::optional<ObjectCipher> for_object(const transfer::KeySource& keys,
                                                const Metadata& metadata, const std::string& name);

  // The key block, then the KMS record when there is one.
  std::vector<std::byte> saved_keys() const;
  // What the object carries: the scheme, the key block, and its file's hash, sealed.
  Metadata metadata(const std::string& plain_hash) const;
  // The file's hash from the metadata; Error(corrupt) naming the object when it is missing or
  // does not authenticate.
  std::string plain_hash(const Metadata& metadata, const std::string& name) const;

  // The object's size for a file of `plain` bytes, and back (Error(corrupt) naming the object
  // when no file has that sealed size).
  static std::uint64_t sealed_size(std::uint64_t plain);
  static std::uint64_t plain_size(std::uint64_t sealed, const std::string& name);

  // Where the file's bytes [offset, offset + size) lie in the object, as [begin, end): `offset`
  // at a block boundary, and `size` whole blocks unless the range ends the file.
  static std::pair<std::uint64_t, std::uint64_t> sealed_range(std::uint64_t offset,
                                                              std::uint64_t size,
                                                              std::uint64_t plain_total);

  // The file's bytes `plain`, which begin at block `first` of a file of `plain_total` bytes
  // (so at a block boundary), sealed into `out`.
  void seal(transfer::Bytes plain, std::uint64_t first, std::uint64_t plain_total,
            std::vector<std::byte>& out) const;
  // The sealed bytes `sealed`, from block `first` of an object holding a file of `plain_total`
  // bytes, opened into `out`. Error(corrupt) naming the object and the block that does not
  // authenticate.
  void open(transfer::Bytes sealed, std::uint64_t first, std::uint64_t plain_total,
            std::vector<std::byte>& out, const std::string& name) const;

 private:
  ObjectCipher(transfer::ArchiveCipher cipher, const transfer::format::KeyBlock& block,
               std::optional<transfer::format::KmsKey> kms)
      : cipher_(std::move(cipher)), block_(block), kms_(std::move(kms)) {}
  static transfer::format::RecordHeader block_header(std::uint64_t index, std::uint64_t size,
                                                     std::uint64_t plain_total);

  transfer::ArchiveCipher cipher_;
  transfer::format::KeyBlock block_;
  std::optional<transfer::format::KmsKey> kms_;
};

}  // namespace nubo::store
