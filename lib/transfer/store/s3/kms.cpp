#include "transfer/store/s3/kms.hpp"

#include <cstring>

#include "common/json.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::s3 {
namespace {

// KMS writes its errors in JSON: {"__type": "com.amazonaws.kms#AccessDeniedException",
// "message": "..."} (some servers spell it "Message").
std::string json_error(const http::Response& r, const char* field) {
  try {
    const auto doc = json::parse(r.body, "KMS's error");
    for (const char* name : {field, field[0] == '_' ? "code" : "Message"})
      if (doc.is_object() && doc.contains(name) && doc[name].is_string()) {
        auto v = doc[name].get<std::string>();
        if (const auto hash = v.rfind('#'); field[0] == '_' && hash != std::string::npos)
          v = v.substr(hash + 1);
        return v;
      }
  } catch (const std::exception&) {
  }
  if (field[0] == '_') {
    const auto type = r.headers.find("x-amzn-errortype");
    if (type != r.headers.end()) return type->second.substr(0, type->second.find(':'));
  }
  return {};
}
const ServiceDialect kKmsErrors{[](const http::Response& r) { return json_error(r, "__type"); },
                                [](const http::Response& r) { return json_error(r, "message"); }};

const char* permission_of(const char* target) {
  return std::strcmp(target, "Decrypt") == 0 ? "kms:Decrypt" : "kms:GenerateDataKey";
}

std::vector<std::byte> base64_field(const nlohmann::json& doc, const char* name,
                                    const std::string& what) {
  if (!doc.contains(name) || !doc[name].is_string())
    throw Error(Errc::corrupt, what + ": KMS's answer has no " + name);
  auto bytes = text::unbase64(doc[name].get<std::string>());
  if (!bytes) throw Error(Errc::corrupt, what + ": KMS's " + name + " is not base64");
  return std::move(*bytes);
}

// The key KMS says it used, as an ARN in full: Error(corrupt) naming `what` otherwise.
std::string answered_key(const nlohmann::json& doc, const std::string& what) {
  if (!doc.contains("KeyId") || !doc["KeyId"].is_string())
    throw Error(Errc::corrupt, what + ": KMS's answer names no KeyId");
  const auto key = doc["KeyId"].get<std::string>();
  parse_kms_key_arn(key, what + ": KMS's KeyId");
  return key;
}

}  // namespace

KmsClient::KmsClient(Config config, SendPolicy policy)
    : config_(std::move(config)), policy_(policy) {
  if (config_.max_attempts > 0) policy_.retries = config_.max_attempts - 1;
  if (config_.timeout_seconds > 0) policy_.timeout_seconds = config_.timeout_seconds;
}

std::string KmsClient::call(const char* target, const std::string& body, const std::string& key) {
  const auto scheme_end = config_.endpoint.find("://") + 3;
  SignedRequest request;
  request.what = "KMS " + std::string(target) + " with key " + (key.empty() ? "(as wrapped)" : key);
  request.action = permission_of(target);
  request.service = "kms";
  request.method = "POST";
  request.scheme_host = config_.endpoint;
  request.host = config_.endpoint.substr(scheme_end);
  request.path = "/";
  request.headers["content-type"] = "application/x-amz-json-1.1";
  request.headers["x-amz-target"] = std::string("TrentService.") + target;
  request.body = transfer::as_bytes(body);
  request.max_response = 64 << 10;
  return send_signed(request, config_, policy_, kKmsErrors,
                     [&](const http::Response& r) { fail(target, key, r); })
      .body;
}

void KmsClient::fail(const char* target, const std::string& key, const http::Response& r) const {
  const std::string code = kKmsErrors.code(r);
  const std::string message = kKmsErrors.message(r);
  const std::string named = key.empty() ? "the key it was wrapped by" : "key " + key;
  const std::string what = "KMS " + std::string(target) + " with " + named + " at " +
                           config_.endpoint + ": " +
                           (code.empty() ? "HTTP " + std::to_string(r.status) : code) +
                           (message.empty() ? "" : " (" + printable(message.substr(0, 300)) + ")");
  const std::string& key_id = config_.credentials.access_key_id;
  if (code == "AccessDeniedException" || (code.empty() && r.status == 403))
    throw Error(Errc::invalid_argument,
                what + ": key id " + key_id + " (profile '" + config_.profile + "') may not use " +
                    named + ": grant it " + permission_of(target) +
                    " on that key (nubo-xfer policy ... --ops ...,kms:KEY prints the policy)");
  if (code == "NotFoundException")
    throw Error(Errc::not_found, what + ": no such key in region " + config_.region +
                                     "; check the key, its alias and AWS_REGION");
  if (code == "IncorrectKeyException")
    throw Error(Errc::invalid_argument,
                what + ": the data key was wrapped by another KMS key than " + named);
  if (code == "InvalidCiphertextException")
    throw Error(Errc::corrupt, what +
                                   ": the wrapped key does not open under this encryption "
                                   "context: it was altered, or moved from where it was made");
  if (code == "DisabledException" || code == "KMSInvalidStateException" ||
      code == "KeyUnavailableException")
    throw Error(Errc::invalid_argument,
                what + ": the key is disabled, pending deletion or unavailable; enable it");
  if (code == "UnrecognizedClientException" || code == "InvalidSignatureException" ||
      code == "ExpiredTokenException" || code == "IncompleteSignature")
    throw Error(Errc::invalid_argument,
                what + ": KMS refused the credentials of key id " + key_id + " (profile '" +
                    config_.profile +
                    "'): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and that a session "
                    "token has not expired");
  if (code == "ValidationException" || code == "InvalidKeyUsageException")
    throw Error(Errc::invalid_argument, what);
  throw Error(Errc::io, what);
}

DataKey KmsClient::generate_data_key(const std::string& key, const EncryptionContext& context) {
  parse_kms_key(key);
  nlohmann::json body = {{"KeyId", key}, {"KeySpec", "AES_256"}, {"EncryptionContext", context}};
  const std::string what = "KMS GenerateDataKey with key " + key;
  const auto doc = json::parse(call("GenerateDataKey", body.dump(), key), what);
  DataKey d;
  const auto plain = base64_field(doc, "Plaintext", what);
  if (plain.size() != d.plaintext.size())
    throw Error(Errc::corrupt, what + ": KMS answered a key of " + std::to_string(plain.size()) +
                                   " bytes, not 32");
  std::memcpy(d.plaintext.data(), plain.data(), plain.size());
  d.wrapped = base64_field(doc, "CiphertextBlob", what);
  if (d.wrapped.empty() || d.wrapped.size() > 6144)
    throw Error(Errc::corrupt, what + ": KMS's wrapped key is " + std::to_string(d.wrapped.size()) +
                                   " bytes long");
  // Kept in the archive or object as the key to ask for later: it must be an ARN in full.
  d.key_id = answered_key(doc, what);
  return d;
}

crypto::AesKey KmsClient::decrypt(std::span<const std::byte> wrapped,
                                  const EncryptionContext& context, const std::string& key,
                                  const std::string& expected_arn) {
  if (!key.empty()) parse_kms_key(key);
  nlohmann::json body = {{"CiphertextBlob", text::base64(wrapped.data(), wrapped.size())},
                         {"EncryptionContext", context}};
  if (!key.empty()) body["KeyId"] = key;
  const std::string what = "KMS Decrypt with key " + (key.empty() ? "(as wrapped)" : key);
  const auto doc = json::parse(call("Decrypt", body.dump(), key), what);
  if (const auto used = answered_key(doc, what); used != expected_arn)
    throw Error(Errc::corrupt, what + ": KMS opened it with key " + used +
                                   ", but it is recorded as " + printable(expected_arn) +
                                   ": the record was altered; refusing its key");
  const auto plain = base64_field(doc, "Plaintext", what);
  crypto::AesKey k{};
  if (plain.size() != k.size())
    throw Error(Errc::corrupt,
                what + ": the key unwrapped is " + std::to_string(plain.size()) + " bytes, not 32");
  std::memcpy(k.data(), plain.data(), plain.size());
  return k;
}

KmsClient open_kms(Config config, std::string_view region) {
  if (!region.empty() && region != config.region) {
    check_region(region, "KMS key");
    if (config.endpoint == kms_endpoint(config.region)) config.endpoint = kms_endpoint(region);
    config.region = std::string(region);
  }
  return KmsClient(std::move(config), {});
}

}  // namespace nubo::s3
