#include "transfer/archive/archive_keys.hpp"

#include "common/crypto.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/store/s3/kms.hpp"

namespace nubo::transfer {
namespace {

constexpr std::string_view kKmsPrefix = "kms:";

s3::EncryptionContext context_of(const std::array<std::byte, 16>& archive_id) {
  return {{"nubo-archive", text::hex(archive_id.data(), archive_id.size())}};
}

}  // namespace

KeySource KeySource::parse(const std::string& spec) {
  KeySource k;
  if (spec.empty()) return k;
  if (spec.rfind(kKmsPrefix, 0) == 0) {
    k.kms_key_ = spec.substr(kKmsPrefix.size());
    s3::check_kms_key(k.kms_key_);
  } else {
    k.file_key_ = read_key_file(spec);
  }
  return k;
}

std::string KeySource::describe() const {
  if (file_key_) return "key " + key_id_text(key_id(*file_key_));
  if (!kms_key_.empty()) return "KMS key " + kms_key_;
  return "no key";
}

Encryption KeySource::create() const {
  std::array<std::byte, 16> archive_id{};
  crypto::random_bytes(archive_id);
  if (file_key_) {
    auto [cipher, block] = ArchiveCipher::create(*file_key_, archive_id);
    return {std::move(cipher), block, std::nullopt};
  }
  const auto data_key = s3::open_kms(kms_key_).generate_data_key(kms_key_, context_of(archive_id));
  auto [cipher, block] = ArchiveCipher::create(data_key.plaintext, archive_id);
  return {std::move(cipher), block, format::KmsKey{data_key.key_id, data_key.wrapped}};
}

ArchiveCipher KeySource::open(const format::KeyBlock& block,
                              const std::optional<format::KmsKey>& kms,
                              const std::string& name) const {
  if (kms) {
    if (file_key_)
      throw Error(Errc::invalid_argument, name + " is encrypted under KMS key " + kms->key_id +
                                              ", not with a key file (" + describe() +
                                              "): give no key, or kms:KEY");
    try {
      const auto kek =
          s3::open_kms(kms->key_id).decrypt(kms->wrapped, context_of(block.archive_id), kms_key_);
      return ArchiveCipher::unwrap(kek, block, name);
    } catch (const Error& e) {
      // Another key than the one asked for: say which one the archive needs.
      if (e.code() != Errc::invalid_argument || kms_key_.empty() || kms_key_ == kms->key_id) throw;
      throw Error(e.code(), std::string(e.what()) + "; " + name + " is encrypted under KMS key " +
                                kms->key_id);
    }
  }
  if (!kms_key_.empty())
    throw Error(Errc::invalid_argument, name + " is encrypted with a key file, key " +
                                            key_id_text(block.key_id) + ", not under " +
                                            describe() + ": give its key file (--key)");
  if (!file_key_)
    throw Error(Errc::invalid_argument, name + " is encrypted: give its key file (--key), key " +
                                            key_id_text(block.key_id));
  return ArchiveCipher::unwrap(*file_key_, block, name);
}

}  // namespace nubo::transfer
