// AWS Signature Version 4 for S3 requests (the Authorization header), as the AWS CLI signs
// them: the canonical request, the string to sign, and the HMAC-SHA256 key chain
// (secret -> date -> region -> service -> "aws4_request"). The payload is signed by its SHA-256
// (x-amz-content-sha256), or "UNSIGNED-PAYLOAD" where something else binds it: the transport
// (TLS), or a signed Content-MD5 header that the server checks.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace nubo::s3 {

inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials (x-amz-security-token); empty: none
};

struct SignInput {
  std::string method;  // "GET", "PUT", ...
  std::string path;    // the URI path, already percent-encoded ("/bucket/key")
  std::string query;   // "a=1&b=2" with names and values percent-encoded; any order
  std::map<std::string, std::string> headers;  // must hold "host"; names in any case
  std::string payload_sha256;                  // hex, or "UNSIGNED-PAYLOAD"
  std::string amz_date;                        // "20130524T000000Z"
  std::string region;
  std::string service = "s3";
};

// Adds x-amz-date, x-amz-content-sha256 (and x-amz-security-token) to `in.headers` and returns
// the Authorization header's value.
std::string sign(SignInput& in, const Credentials& credentials);

// Percent-encoding as SigV4 wants it: unreserved characters kept, '/' kept when `keep_slash`.
std::string uri_encode(std::string_view text, bool keep_slash);
std::string sha256_hex(std::string_view data);
// "20130524T000000Z" for a time (seconds since the epoch, UTC).
std::string amz_date(long long unix_seconds);

}  // namespace nubo::s3
