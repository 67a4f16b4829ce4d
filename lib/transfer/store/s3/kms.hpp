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
#include "transfer/store/s3/aws_names.hpp"
#include "transfer/store/s3/config.hpp"
#include "transfer/store/s3/signed_send.hpp"

namespace nubo::s3 {

using EncryptionContext = std::map<std::string, std::string>;

struct DataKey {
  crypto::AesKey plaintext{};
  std::string key_id;              // the KMS key's ARN, as KMS answers it (an alias resolved)
  std::vector<std::byte> wrapped;  // the CiphertextBlob
};

class KmsClient {
 public:
  KmsClient(Config config, SendPolicy policy);
  const Config& config() const { return config_; }

  DataKey generate_data_key(const std::string& key, const EncryptionContext& context);
  // The key `wrapped` holds. `key`: the KMS key it must be wrapped by, or "" for the one the
  // wrapped key names. `expected_arn`: the key's ARN as recorded beside it; KMS's answer must
  // name that key, else Error(corrupt) (a record whose ARN was rewritten). Error(corrupt) also
  // when it does not open under `context` (altered, or moved from where it was made).
  crypto::AesKey decrypt(std::span<const std::byte> wrapped, const EncryptionContext& context,
                         const std::string& key, const std::string& expected_arn);

 private:
  // The JSON answer to `target` (GenerateDataKey, Decrypt) of `body`, about `key`.
  std::string call(const char* target, const std::string& body, const std::string& key);
  [[noreturn]] void fail(const char* target, const std::string& key, const http::Response& r) const;

  Config config_;
  SendPolicy policy_;
};

// A KMS client configured as the S3 client is (`config`, from load_config(..., Service::kms)),
// in `region` when it is not empty (KMS keys are regional): AWS's endpoint for that region, built
// from the checked name, unless an endpoint is configured. Only ever a KMS endpoint: the
// configured one, or https://kms.REGION.amazonaws.com (.com.cn in China).
KmsClient open_kms(Config config, std::string_view region);

}  // namespace nubo::s3
