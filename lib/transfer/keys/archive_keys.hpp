// Where the key-encryption key (KEK) of an encrypted archive or object comes from
// (docs/archive-format.md, "Encryption"):
//  - a key file (--encrypt FILE, --key FILE): the KEK itself, which the user keeps;
//  - a KMS key (--encrypt kms:KEY): each archive or object gets a fresh KEK from AWS KMS
//    (GenerateDataKey) and keeps it only as KMS wrapped it, in its KMS record, beside the KMS key's
//    ARN. A reader asks KMS to unwrap it (Decrypt) with its own credentials: it needs no --key,
//    and no one ever holds the KMS key itself. The encryption context {"nubo-archive": the
//    archive's id} binds the wrapped KEK to its archive: copied into another, it does not open.
// Either way the KEK wraps the archive's own data key (archive_cipher.hpp), so that the records,
// the resume and the checks are the same whichever holds the key.
#pragma once

#include <optional>
#include <string>

#include "transfer/format/format.hpp"
#include "transfer/keys/archive_cipher.hpp"

namespace nubo::transfer {

// An archive encrypted: its cipher and the key block of its header, and the KMS record when its
// KEK is KMS's.
struct Encryption {
  ArchiveCipher cipher;
  format::KeyBlock block;
  std::optional<format::KmsKey> kms;
};

class KeySource {
 public:
  // Nothing given: plain archives, and those under a KMS key, can be read.
  KeySource() = default;
  // "" (nothing), "kms:KEY" (a key id, alias/NAME, or the ARN of either), "kms-region:REGION"
  // (nothing, and archives under KMS keys of REGION may be read too), or a key file's path.
  // Error(invalid_argument) naming a malformed KMS key or region; Error(not_found or
  // invalid_argument) for a key file that is missing or not a key.
  //
  // A reader asks KMS only in the configured region (AWS_REGION, the profile's region) unless it
  // was told another: the archive's own key ARN given as kms:ARN, or its region as
  // kms-region:REGION. An archive cannot choose where its reader's credentials are sent.
  static KeySource parse(const std::string& spec);
  // A key file's key, already read.
  static KeySource of(const Key& kek) {
    KeySource k;
    k.file_key_ = kek;
    return k;
  }

  bool encrypts() const { return file_key_.has_value() || !kms_key_.empty(); }
  // What names the key in an identity or a message, without revealing it: "key 3f2a..." (a key
  // file's key id) or "KMS key alias/x".
  std::string describe() const;

  // A fresh data key for a new archive or object. Precondition: encrypts().
  Encryption create() const;
  // The data key of `name`, from its key block and KMS record. Error(invalid_argument) when what
  // was given is not what it needs (naming both) or the record's key is in a region not allowed
  // (above), Error(corrupt) when KMS opened it with another key than the record names, and KMS's
  // errors (s3/kms.hpp) on the way.
  ArchiveCipher open(const format::KeyBlock& block, const std::optional<format::KmsKey>& kms,
                     const std::string& name) const;

 private:
  std::optional<Key> file_key_;
  std::string kms_key_;
  std::string kms_region_;  // kms-region:REGION
};

}  // namespace nubo::transfer
