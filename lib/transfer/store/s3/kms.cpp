#include "transfer/store/s3/kms.hpp"

#include <cctype>
#include <cstring>

#include "common/json.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::s3 {
namespace {

bool id_chars(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  return true;
}

// An alias's name as KMS allows it: 1-250 of [A-Za-z0-9/_-], not "aws/" (AWS's own keys, which
// cannot wrap data keys for others).
bool alias_chars(std::string_view s) {
  if (s.empty() || s.size() > 250) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '/' && c != '_' && c != '-')
      return false;
  return true;
}

[[noreturn]] void bad_key(std::string_view key, const std::string& why) {
  throw Error(Errc::invalid_argument,
              "'" + printable(std::string(key.substr(0, 200))) + "' is not a KMS key: " + why +
                  " (give a key id, alias/NAME, or arn:aws:kms:REGION:ACCOUNT:key/ID or "
                  "...:alias/NAME)");
}

// KMS writes its errors in JSON: {"__type": "com.amazonaws.kms#AccessDeniedException",
// "message": "..."} (some servers spell it "Message").
std::string json_error(const http::Response& r, const char* field) {
  try {
    const auto doc = nlohmann::json::parse(r.body);
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

}  // namespace

void check_kms_key(std::string_view key) {
  if (key.empty()) bad_key(key, "it is empty");
  if (key.size() > 2048) bad_key(key, "it is longer than the 2048 characters KMS allows");
  if (key.rfind("alias/", 0) == 0) {
    if (!alias_chars(key.substr(6))) bad_key(key, "an alias's name is 1-250 of A-Z a-z 0-9 / _ -");
    return;
  }
  if (key.rfind("arn:", 0) != 0) {
    if (!id_chars(key)) bad_key(key, "a key id is letters, digits and '-'");
    return;
  }
  const auto parts = text::split(key, ':');
  if (parts.size() != 6) bad_key(key, "an ARN has six fields separated by ':'");
  if (parts[1].empty()) bad_key(key, "the ARN names no partition (aws, aws-cn, aws-us-gov)");
  if (parts[2] != "kms") bad_key(key, "the ARN is of service '" + std::string(parts[2]) + "'");
  if (parts[3].empty()) bad_key(key, "the ARN names no region");
  if (parts[4].size() != 12 || parts[4].find_first_not_of("0123456789") != std::string_view::npos)
    bad_key(key, "the ARN's account is not 12 digits");
  const auto resource = parts[5];
  if (resource.rfind("key/", 0) == 0 && id_chars(resource.substr(4))) return;
  if (resource.rfind("alias/", 0) == 0 && alias_chars(resource.substr(6))) return;
  bad_key(key, "the ARN's resource is neither key/ID nor alias/NAME");
}

std::string kms_key_region(std::string_view key) {
  if (key.rfind("arn:", 0) != 0) return {};
  const auto parts = text::split(key, ':');
  return parts.size() == 6 ? std::string(parts[3]) : std::string();
}

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
  check_kms_key(key);
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
  d.key_id =
      doc.contains("KeyId") && doc["KeyId"].is_string() ? doc["KeyId"].get<std::string>() : key;
  if (d.key_id.empty() || d.key_id.size() > 2048)
    throw Error(Errc::corrupt, what + ": KMS named its key with " +
                                   std::to_string(d.key_id.size()) + " characters");
  return d;
}

crypto::AesKey KmsClient::decrypt(std::span<const std::byte> wrapped,
                                  const EncryptionContext& context, const std::string& key) {
  if (!key.empty()) check_kms_key(key);
  nlohmann::json body = {{"CiphertextBlob", text::base64(wrapped.data(), wrapped.size())},
                         {"EncryptionContext", context}};
  if (!key.empty()) body["KeyId"] = key;
  const std::string what = "KMS Decrypt with key " + (key.empty() ? "(as wrapped)" : key);
  const auto doc = json::parse(call("Decrypt", body.dump(), key), what);
  const auto plain = base64_field(doc, "Plaintext", what);
  crypto::AesKey k{};
  if (plain.size() != k.size())
    throw Error(Errc::corrupt,
                what + ": the key unwrapped is " + std::to_string(plain.size()) + " bytes, not 32");
  std::memcpy(k.data(), plain.data(), plain.size());
  return k;
}

KmsClient open_kms(std::string_view key) {
  auto config = load_config("", Service::kms);
  const auto region = kms_key_region(key);
  if (!region.empty() && region != config.region) {
    if (config.endpoint == "https://kms." + config.region + ".amazonaws.com")
      config.endpoint = "https://kms." + region + ".amazonaws.com";
    config.region = region;
  }
  return KmsClient(std::move(config), {});
}

}  // namespace nubo::s3
