#include "transfer/keys/archive_keys.hpp"

#include "common/crypto.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/store/s3/aws_names.hpp"
#include "transfer/store/s3/config.hpp"
#include "transfer/store/s3/kms.hpp"

namespace nubo::transfer {
namespace {

constexpr std::string_view kKmsPrefix = "kms:", kKmsRegionPrefix = "kms-region:";

s3::EncryptionContext context_of(const std::array<std::byte, 16>& archive_id) {
  return {{"nubo-archive", text::hex(archive_id.data(), archive_id.size())}};
}

}  // namespace

KeySource KeySource::parse(const std::string& spec) {
  KeySource k;
  if (spec.empty()) return k;
  if (spec.starts_with(kKmsPrefix)) {
    k.kms_key_ = spec.substr(kKmsPrefix.size());
    s3::parse_kms_key(k.kms_key_);
  } else if (spec.starts_with(kKmsRegionPrefix)) {
    k.kms_region_ = spec.substr(kKmsRegionPrefix.size());
    s3::check_region(k.kms_region_, "kms-region");
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
  const auto asked = s3::parse_kms_key(kms_key_);
  const auto data_key = s3::open_kms(s3::load_config("", s3::Service::kms), asked.region)
                            .generate_data_key(kms_key_, context_of(archive_id));
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
    // The record's ARN was checked as it was read (format::decode_kms_record); it names where
    // KMS would be asked, which only the reader may choose.
    const auto recorded = s3::parse_kms_key_arn(kms->key_id, name);
    auto config = s3::load_config("", s3::Service::kms);
    // A key the reader named by its ARN names the region to ask in too.
    bool named = false;
    if (const auto asked = kms_key_.empty() ? s3::KmsKeyName{} : s3::parse_kms_key(kms_key_);
        asked.arn) {
      if (asked.resource.starts_with("key/") && kms_key_ != kms->key_id)
        throw Error(Errc::invalid_argument,
                    name + " is encrypted under KMS key " + kms->key_id + ", not " + kms_key_);
      if (asked.region != recorded.region)
        throw Error(Errc::invalid_argument, name + " is encrypted under KMS key " + kms->key_id +
                                                ", in region " + recorded.region + ", not " +
                                                asked.region + " as " + kms_key_ + " is");
      named = true;
    }
    if (recorded.region != config.region && !named && recorded.region != kms_region_)
      throw Error(Errc::invalid_argument,
                  name + " is encrypted under KMS key " + kms->key_id + " in region " +
                      recorded.region + ", not the configured region " + config.region +
                      ": to let nubo ask KMS in " + recorded.region + ", give --kms-region " +
                      recorded.region + " (or the key's ARN as --key kms:ARN)");
    try {
      const auto kek =
          s3::open_kms(std::move(config), recorded.region)
              .decrypt(kms->wrapped, context_of(block.archive_id), kms_key_, kms->key_id);
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
