#include "transfer/store/s3/sigv4.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <vector>

#include "common/crypto.hpp"
#include "common/text.hpp"

namespace nubo::s3 {
namespace {

std::string hmac(const std::string& key, std::string_view data) {
  auto mac =
      crypto::hmac_sha256(key, {reinterpret_cast<const std::byte*>(data.data()), data.size()});
  return {reinterpret_cast<const char*>(mac.data()), mac.size()};
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Header values are trimmed and inner runs of spaces collapsed to one.
std::string canonical_value(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// The query with each pair sorted by name, then value (already encoded).
std::string canonical_query(std::string_view query) {
  if (query.empty()) return {};
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto part : text::split(query, '&')) {
    if (part.empty()) continue;
    auto eq = part.find('=');
    pairs.emplace_back(std::string(part.substr(0, eq)),
                       eq == std::string_view::npos ? "" : std::string(part.substr(eq + 1)));
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [k, v] : pairs) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

}  // namespace

std::string uri_encode(std::string_view text, bool keep_slash) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return text::hex(digest, sizeof digest);
}

std::string amz_date(long long unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[17];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string sign(SignInput& in, const Credentials& credentials) {
  std::map<std::string, std::string> headers;
  for (const auto& [k, v] : in.headers) headers[lower(k)] = canonical_value(v);
  headers["x-amz-date"] = in.amz_date;
  headers["x-amz-content-sha256"] = in.payload_sha256;
  if (!credentials.session_token.empty())
    headers["x-amz-security-token"] = credentials.session_token;
  std::string canonical_headers, signed_headers;
  for (const auto& [k, v] : headers) {
    canonical_headers += k + ":" + v + "\n";
    if (!signed_headers.empty()) signed_headers += ';';
    signed_headers += k;
  }
  const std::string canonical_request = in.method + "\n" + in.path + "\n" +
                                        canonical_query(in.query) + "\n" + canonical_headers +
                                        "\n" + signed_headers + "\n" + in.payload_sha256;
  const std::string date = in.amz_date.substr(0, 8);
  const std::string scope = date + "/" + in.region + "/" + in.service + "/aws4_request";
  const std::string to_sign =
      "AWS4-HMAC-SHA256\n" + in.amz_date + "\n" + scope + "\n" + sha256_hex(canonical_request);
  auto key = hmac("AWS4" + credentials.secret_access_key, date);
  key = hmac(key, in.region);
  key = hmac(key, in.service);
  key = hmac(key, "aws4_request");
  const auto signature = hmac(key, to_sign);
  in.headers = headers;
  return "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + scope +
         ",SignedHeaders=" + signed_headers +
         ",Signature=" + text::hex(signature.data(), signature.size());
}

}  // namespace nubo::s3
