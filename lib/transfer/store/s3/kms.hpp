// AWS KMS, for envelope encryption (archive_keys.hpp): GenerateDataKey makes a fresh 256-bit key
// and answers it both in the clear and wrapped under a KMS key that never leaves KMS; Decrypt
// unwraps it. Both take an encryption context, which KMS binds to the wrapped key: it opens only
// under the same context. JSON over HTTP (x-amz-json-1.1) with the S3 client's configuration
// (profiles, AWS_ENDPOINT_URL_KMS), signing, retries and kind of errors (signed_send.hpp): a
// refusal names the key and the permission missing.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/crypto.hpp"
#include "transfer/store/s3/config.hpp"
#include "transfer/store/s3/signed_send.hpp"

namespace nubo::s3 {

using EncryptionContext = std::map<std::string, std::string>;

struct DataKey {
  crypto::AesKey plaintext{};
  std::string key_id;              // the KMS key's ARN, as KMS answers it (an alias resolved)
  std::vector<std::byte> wrapped;  // the CiphertextBlob
};

// Error(invalid_argument) naming what is wrong unless `key` is a KMS key as the AWS CLI takes it:
// a key id (1234abcd-..., mrk-...), an alias ("alias/NAME"), or the ARN of either
// ("arn:aws:kms:REGION:ACCOUNT:key/ID", "arn:aws:kms:REGION:ACCOUNT:alias/NAME").
void check_kms_key(std::string_view key);
// The region an ARN names; "" for key ids and aliases.
std::string kms_key_region(std::string_view key);

class KmsClient {
 public:
  KmsClient(Config config, SendPolicy policy);
  const Config& config() const { return config_; }

  DataKey generate_data_key(const std::string& key, const EncryptionContext& context);
  // The key `wrapped` holds. `key`: the KMS key it must be wrapped by, or "" for the one the
  // wrapped key names. Error(corrupt) when it does not open under `context` (altered, or moved
  // from where it was made).
  crypto::AesKey decrypt(std::span<const std::byte> wrapped, const EncryptionContext& context,
                         const std::string& key);

 private:
  // The JSON answer to `target` (GenerateDataKey, Decrypt) of `body`, about `key`.
  std::string call(const char* target, const std::string& body, const std::string& key);
  [[noreturn]] void fail(const char* target, const std::string& key, const http::Response& r) const;

  Config config_;
  SendPolicy policy_;
};

// A KMS client configured as the S3 client is (load_config), in the region of `key` when it is an
// ARN (KMS keys are regional) unless an endpoint is set.
KmsClient open_kms(std::string_view key);

}  // namespace nubo::s3
