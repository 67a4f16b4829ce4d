#include "transfer/store/s3/client.hpp"

#include <algorithm>

#include "common/crc32c.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/store/s3/permissions.hpp"
#include "transfer/store/s3/responses.hpp"
#include "transfer/store/s3/signed_send.hpp"
#include "transfer/store/s3/sigv4.hpp"

namespace nubo::s3 {
namespace {

// S3 writes its errors in XML: <Error><Code>...</Code><Message>...</Message></Error>.
std::string first_xml(const http::Response& r, const char* tag) {
  const auto values = xml_values(r.body, tag, 1);
  return values.empty() ? std::string() : values[0];
}
const ServiceDialect kS3Errors{[](const http::Response& r) { return first_xml(r, "Code"); },
                               [](const http::Response& r) { return first_xml(r, "Message"); }};

// Bucket names S3 accepts: 3-63 of [a-z0-9.-], starting and ending with a letter or digit.
bool valid_bucket(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b)
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-'))
      return false;
  return std::isalnum(static_cast<unsigned char>(b.front())) &&
         std::isalnum(static_cast<unsigned char>(b.back()));
}

}  // namespace

bool is_s3_url(std::string_view text) {
  return text.rfind("s3://", 0) == 0;
}

ObjectUrl parse_bucket_url(std::string_view text, std::string_view scheme,
                           bool (*valid_bucket)(std::string_view), std::string_view bucket_rule) {
  const std::string prefix = std::string(scheme) + "://";
  if (text.rfind(prefix, 0) != 0)
    throw Error(
        Errc::invalid_argument,
        "'" + std::string(text) + "' is not " +
            (std::string_view("aefhilmnorsx").find(scheme[0]) == std::string_view::npos ? "a "
                                                                                        : "an ") +
            prefix + "BUCKET/KEY URL");
  auto rest = text.substr(prefix.size());
  const auto slash = rest.find('/');
  ObjectUrl u;
  u.scheme = std::string(scheme);
  u.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) u.key = std::string(rest.substr(slash + 1));
  if (u.bucket.empty())
    throw Error(Errc::invalid_argument, "'" + std::string(text) + "' names no bucket");
  if (!valid_bucket(u.bucket))
    throw Error(Errc::invalid_argument,
                "'" + u.bucket + "' is not a bucket name " + std::string(bucket_rule));
  if (u.key.size() > 1024)
    throw Error(Errc::invalid_argument, "the key of '" + std::string(text).substr(0, 80) +
                                            "...' is longer than the 1024 bytes a key may have");
  return u;
}

ObjectUrl parse_s3_url(std::string_view text) {
  return parse_bucket_url(text, "s3", valid_bucket,
                          "S3 accepts: 3 to 63 lower-case letters, digits, '.' and '-'");
}

namespace {

// A body's CRC-32C as x-amz-checksum-crc32c carries it: the 4 bytes, big-endian, in base64.
std::string crc32c_base64(transfer::Bytes body) {
  const auto crc = crc32c::extend(0, body.data(), body.size());
  const unsigned char be[4] = {
      static_cast<unsigned char>(crc >> 24), static_cast<unsigned char>(crc >> 16),
      static_cast<unsigned char>(crc >> 8), static_cast<unsigned char>(crc)};
  return text::base64(be, sizeof be);
}

// Whether the server stored the body it was sent, from its answer. A server that checks
// x-amz-checksum-crc32c (S3, MinIO) answers with the CRC-32C of what it received. The ETag of
// what it kept is the MD5 of those bytes, unless the object is encrypted with the server's or
// the caller's key (SSE-KMS, SSE-C), or the server makes ETags of its own. A difference means
// the bytes were altered on the way, and whatever altered them dropped the Content-MD5 that
// would have made the server refuse them: the upload failed, and nothing of it may count as
// stored.
void check_stored(const http::Response& r, const Md5& sent, const std::string& crc,
                  const std::string& what) {
  const auto again = ". Nothing of them counts as uploaded: run the same command again";
  if (const auto echo = r.headers.find("x-amz-checksum-crc32c");
      echo != r.headers.end() && echo->second != crc)
    throw Error(Errc::corrupt, what + ": the server received bytes whose CRC-32C is " +
                                   printable(echo->second.substr(0, 16)) + ", not " + crc +
                                   " as sent: they were altered on the way" + again);
  const auto etag = r.headers.find("etag");
  if (etag == r.headers.end()) throw Error(Errc::corrupt, what + ": the server gave no ETag");
  const auto sse = r.headers.find("x-amz-server-side-encryption");
  if (etag_is_not_content_md5(sse == r.headers.end() ? "" : sse->second,
                              r.headers.count("x-amz-server-side-encryption-customer-algorithm")))
    return;
  const auto stored = parse_etag_md5(etag->second);
  if (!stored || stored->parts != 0) return;
  if (stored->md5 != md5_hex(sent))
    throw Error(Errc::corrupt, what + ": the server stored bytes whose MD5 is " + stored->md5 +
                                   ", not " + md5_hex(sent) +
                                   " as sent: they were altered on the way" + again);
}

// Whether a completed multipart upload is the parts it was made of: its ETag, when S3's form
// ("<MD5 of the parts' MD5s>-N"), must name those N parts. Other forms (a server's own, or under
// SSE-KMS) are opaque.
void check_completed(std::string_view body, const std::vector<Part>& parts,
                     const std::string& what) {
  const auto etags = xml_values(body, "ETag", 1);
  if (etags.empty()) return;
  const auto etag = parse_etag_md5(etags[0]);
  if (!etag || etag->parts == 0) return;
  std::vector<Md5> digests;
  for (const auto& p : parts) {
    const auto d = md5_of_etag(p.etag);
    if (!d) return;  // parts whose ETags are no MD5s: nothing to compare with
    digests.push_back(*d);
  }
  const auto expected = multipart_etag(digests);
  if (etag->md5 + "-" + std::to_string(etag->parts) != expected)
    throw Error(Errc::corrupt, what + ": the server completed the object as '" + etags[0] +
                                   "', not the " + std::to_string(parts.size()) + " parts sent ('" +
                                   expected +
                                   "'): the object is not what was uploaded; run the same "
                                   "command again");
}

}  // namespace

Client::Client(Config config, ClientOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      limiter_(std::make_shared<transfer::RateLimiter>(options_.rate)) {
  if (config_.max_attempts > 0) options_.retries = config_.max_attempts - 1;
  if (config_.timeout_seconds > 0) options_.timeout_seconds = config_.timeout_seconds;
}

std::string Client::url_of(const ObjectUrl& url, std::string& host, std::string& path) const {
  const auto scheme_end = config_.endpoint.find("://") + 3;
  const std::string scheme = config_.endpoint.substr(0, scheme_end);
  const std::string endpoint_host = config_.endpoint.substr(scheme_end);
  const std::string key = uri_encode(url.key, true);
  if (config_.path_style) {
    host = endpoint_host;
    path = "/" + url.bucket + (url.key.empty() && key.empty() ? "" : "/" + key);
  } else {
    host = url.bucket + "." + endpoint_host;
    path = "/" + key;
  }
  return scheme + host + path;
}

http::Response Client::send(const Call& call) {
  std::string host, path;
  const std::string base = url_of(*call.url, host, path);
  const auto action = action_of(call.method, call.query, !call.url->key.empty());
  if (options_.operation != store::Operation::any) {
    const auto& granted = actions_for(options_.operation);
    if (!std::binary_search(granted.begin(), granted.end(), action))
      throw Error(Errc::internal, call.method + " " + call.url->text() + " needs " +
                                      std::string(action) + ", which the policy of " +
                                      std::string(operation_name(options_.operation)) +
                                      " (nubo-xfer policy) does not grant: a bug in nubo; "
                                      "please report it");
  }
  SignedRequest request;
  request.what = call.method + " " + call.url->text();
  request.action = action;
  request.service = "s3";
  request.method = call.method;
  request.scheme_host = base.substr(0, base.size() - path.size());
  request.host = host;
  request.path = path;
  request.query = call.query;
  request.headers = call.headers;
  request.body = call.body;
  request.max_response = call.max_response;
  request.unsigned_payload = config_.unsigned_payload && call.headers.count("content-md5");
  return send_signed(
      request, config_, {options_.retries, options_.timeout_seconds}, kS3Errors,
      [&](const http::Response& r) { fail(call, r); }, payloads_signed_.get());
}

namespace {
bool on_aws(const std::string& endpoint) {
  return endpoint.ends_with(".amazonaws.com") || endpoint.ends_with(".amazonaws.com.cn");
}
}  // namespace

bool Client::copies_from(const store::Store& source) const {
  const auto* other = dynamic_cast<const Client*>(&source);
  if (!other || other->config_.credentials.access_key_id != config_.credentials.access_key_id)
    return false;
  return other->config_.endpoint == config_.endpoint ||
         (on_aws(other->config_.endpoint) && on_aws(config_.endpoint));
}

std::string Client::service() const {
  // Bucket names are global within AWS: every regional endpoint reaches the same bucket.
  return on_aws(config_.endpoint) ? "aws" : config_.endpoint;
}

void Client::encryption_headers(Call& call) const {
  const auto& s3 = options_.s3;
  if (!s3.server_side_encryption.empty())
    call.headers["x-amz-server-side-encryption"] = s3.server_side_encryption;
  if (!s3.kms_key_id.empty())
    call.headers["x-amz-server-side-encryption-aws-kms-key-id"] = s3.kms_key_id;
}

void Client::copy_headers(Call& call, const ObjectUrl& source) const {
  call.headers["x-amz-copy-source"] = "/" + source.bucket + "/" + uri_encode(source.key, true);
  encryption_headers(call);
}

std::string Client::copied_etag(const Call& call, const http::Response& r) const {
  if (!xml_values(r.body, "Code", 1).empty()) fail(call, r);
  const auto etags = xml_values(r.body, "ETag", 1);
  if (etags.empty())
    throw Error(Errc::corrupt, call.method + " " + call.url->text() +
                                   ": the copy's answer names no ETag: " + r.body.substr(0, 200));
  return unquote(etags[0]);
}

std::string Client::copy_object(const ObjectUrl& source, const ObjectUrl& to) {
  Call c{"PUT", &to};
  copy_headers(c, source);
  c.headers["x-amz-metadata-directive"] = "COPY";
  return copied_etag(c, send(c));
}

Part Client::upload_part_copy(const ObjectUrl& to, const std::string& upload_id, int number,
                              const ObjectUrl& source, std::uint64_t offset, std::uint64_t size) {
  Call c{"PUT", &to,
         "partNumber=" + std::to_string(number) + "&uploadId=" + uri_encode(upload_id, false)};
  copy_headers(c, source);
  c.headers.erase("x-amz-server-side-encryption");  // set by the upload, not by its parts
  c.headers.erase("x-amz-server-side-encryption-aws-kms-key-id");
  c.headers["x-amz-copy-source-range"] =
      "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + size - 1);
  return {number, size, copied_etag(c, send(c)), ""};
}

void Client::fail(const Call& call, const http::Response& r) const {
  const auto codes = xml_values(r.body, "Code", 1);
  const auto messages = xml_values(r.body, "Message", 1);
  const std::string code = codes.empty() ? "HTTP " + std::to_string(r.status) : codes[0];
  const std::string what = call.method + " " + call.url->text() + ": " + code +
                           (messages.empty() ? "" : " (" + messages[0].substr(0, 300) + ")");
  const std::string& key_id = config_.credentials.access_key_id;
  if (code == "NoSuchBucket")
    throw Error(Errc::not_found, what + ": the bucket '" + call.url->bucket +
                                     "' does not exist at " + config_.endpoint +
                                     "; check its name, the endpoint and the region, or create it");
  if (code == "NoSuchKey" || (r.status == 404 && call.method == "HEAD"))
    throw Error(Errc::not_found, what + ": no such object");
  if (code == "NoSuchUpload") throw Error(Errc::not_found, what + ": the upload is gone");
  if (code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "InvalidToken" ||
      code == "ExpiredToken")
    throw Error(Errc::invalid_argument,
                what + ": the server refused the credentials of key id " + key_id + " (profile '" +
                    config_.profile +
                    "'): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the profile's "
                    "keys), and that a session token has not expired");
  if (code == "AccessDenied" || r.status == 403) {
    if (code == "RequestTimeTooSkewed")
      throw Error(Errc::invalid_argument,
                  what +
                      ": this machine's clock differs from the server's by more than 15 "
                      "minutes; set it right (timedatectl set-ntp true, or chrony)");
    // A HEAD's answer has no body, so S3 cannot say which: wrong credentials or no permission.
    if (codes.empty())
      throw Error(Errc::invalid_argument,
                  what +
                      " with no reason given: either the server refused the credentials of "
                      "key id " +
                      key_id +
                      " (check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                      "or the profile's keys), or that key may not read this object "
                      "(s3:GetObject)");
    throw Error(Errc::invalid_argument,
                what + ": key id " + key_id + " may not do this; grant it the permission (s3:" +
                    (call.method == "GET" || call.method == "HEAD" ? "GetObject" : "PutObject") +
                    " on this bucket) or use another profile");
  }
  if (code == "RequestTimeTooSkewed")
    throw Error(Errc::invalid_argument,
                what +
                    ": this machine's clock differs from the server's by more than 15 "
                    "minutes; set it right (timedatectl set-ntp true, or chrony)");
  if (code == "AuthorizationHeaderMalformed" || code == "PermanentRedirect" || r.status == 301) {
    const auto region = r.headers.count("x-amz-bucket-region") ? r.headers.at("x-amz-bucket-region")
                                                               : std::string();
    throw Error(Errc::invalid_argument, what + ": the bucket is in " +
                                            (region.empty() ? "another region" : region) +
                                            ", not " + config_.region + "; set AWS_REGION" +
                                            (region.empty() ? "" : "=" + region));
  }
  if (r.status >= 300 && r.status < 400) {
    // A signed request sent on elsewhere would carry its credentials there: never followed.
    const auto location = r.headers.count("location") ? r.headers.at("location") : std::string();
    const auto endpoints = xml_values(r.body, "Endpoint", 1);
    const auto to = !location.empty()    ? location
                    : !endpoints.empty() ? endpoints[0]
                                         : std::string("another address it did not name");
    throw Error(Errc::invalid_argument,
                what + ": the server redirected the request to " + printable(to.substr(0, 300)) +
                    "; nubo does not follow redirects with credentials: set the endpoint (or "
                    "AWS_REGION) to where the bucket is");
  }
  if (code == "QuotaExceeded" || code == "EntityTooLarge" || r.status == 507)
    throw Error(Errc::io, what +
                              ": the storage quota is exhausted or the object too large; "
                              "free space or raise the quota");
  if (code == "BadDigest" || code == "InvalidDigest")
    throw Error(Errc::corrupt, what + ": the data did not match its checksum on arrival");
  if (code == "NotImplemented" || r.status == 501)
    throw Error(Errc::unsupported,
                what +
                    ": the server does not implement this request, which S3 does; use a "
                    "server that implements S3's multipart, ranged and HEAD calls");
  throw Error(Errc::io, what);
}

void Client::create_bucket(const std::string& bucket) {
  ObjectUrl url{bucket, ""};
  Call c{"PUT", &url};
  if (config_.region != "us-east-1") {
    const std::string body = "<CreateBucketConfiguration><LocationConstraint>" + config_.region +
                             "</LocationConstraint></CreateBucketConfiguration>";
    c.body = transfer::as_bytes(body);
    send(c);
    return;
  }
  send(c);
}

void Client::put_object(const ObjectUrl& url, transfer::Bytes body, const Metadata& metadata) {
  limiter_->acquire(body.size());
  Call c{"PUT", &url};
  c.body = body;
  const auto md5 = md5_of(body);
  const auto crc = crc32c_base64(body);
  c.headers["content-md5"] = md5_base64(md5);
  c.headers["x-amz-checksum-crc32c"] = crc;
  for (const auto& [k, v] : metadata) c.headers["x-amz-meta-" + k] = v;
  encryption_headers(c);
  check_stored(send(c), md5, crc, "PUT " + url.text());
}

std::optional<ObjectInfo> Client::head_object(const ObjectUrl& url) {
  return head(url, {});
}

std::optional<ObjectInfo> Client::head_part(const ObjectUrl& url, int number) {
  return head(url, "partNumber=" + std::to_string(number));
}

std::optional<ObjectInfo> Client::head(const ObjectUrl& url, const std::string& query) {
  Call c{"HEAD", &url, query};
  http::Response r;
  try {
    r = send(c);
  } catch (const Error& e) {
    if (e.code() == Errc::not_found &&
        std::string(e.what()).find("no such object") != std::string::npos)
      return std::nullopt;
    throw;
  }
  ObjectInfo info;
  const auto number = [&](const char* header, const std::string& text) {
    try {
      std::size_t used = 0;
      const auto v = std::stoull(text, &used);
      if (used != text.size()) throw std::invalid_argument(text);
      return v;
    } catch (const std::exception&) {
      throw Error(Errc::corrupt, "HEAD " + url.text() + ": " + header + " '" + text.substr(0, 40) +
                                     "' is not a number");
    }
  };
  const auto length = r.headers.find("content-length");
  if (length == r.headers.end())
    throw Error(Errc::corrupt, "HEAD " + url.text() + ": the server gave no Content-Length");
  info.size = number("Content-Length", length->second);
  if (auto e = r.headers.find("etag"); e != r.headers.end()) info.etag = unquote(e->second);
  if (auto e = r.headers.find("x-amz-server-side-encryption"); e != r.headers.end())
    info.server_side_encryption = e->second;
  info.customer_key = r.headers.count("x-amz-server-side-encryption-customer-algorithm") != 0;
  if (auto e = r.headers.find("x-amz-mp-parts-count"); e != r.headers.end()) {
    const auto parts = number("x-amz-mp-parts-count", e->second);
    if (parts > 10000)
      throw Error(Errc::corrupt, "HEAD " + url.text() + ": " + std::to_string(parts) +
                                     " parts is beyond S3's 10,000");
    info.parts = static_cast<int>(parts);
  }
  for (const auto& [k, v] : r.headers)
    if (k.rfind("x-amz-meta-", 0) == 0) info.metadata[k.substr(11)] = v;
  return info;
}

std::string Client::get_range(const ObjectUrl& url, std::uint64_t offset, std::uint64_t size) {
  if (size == 0) return {};
  limiter_->acquire(size);
  Call c{"GET", &url};
  c.headers["range"] = "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + size - 1);
  c.max_response = static_cast<std::size_t>(size);
  auto r = send(c);
  if (r.body.size() != size)
    throw Error(Errc::corrupt, "GET " + url.text() + " bytes " + std::to_string(offset) + "+" +
                                   std::to_string(size) + ": the server sent " +
                                   std::to_string(r.body.size()) + " bytes");
  return std::move(r.body);
}

void Client::delete_object(const ObjectUrl& url) {
  Call c{"DELETE", &url};
  send(c);
}

std::vector<std::pair<std::string, std::uint64_t>> Client::list_objects(const ObjectUrl& prefix,
                                                                        std::size_t limit) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  const ObjectUrl bucket = prefix.with_key("");
  std::string token;
  for (;;) {
    Call c{"GET", &bucket, "list-type=2&prefix=" + uri_encode(prefix.key, false)};
    if (!token.empty()) c.query += "&continuation-token=" + uri_encode(token, false);
    c.max_response = 16 << 20;
    auto r = send(c);
    auto page = parse_list_objects(r.body, "ListObjectsV2 " + prefix.text());
    for (auto& object : page.objects) {
      out.push_back(std::move(object));
      if (out.size() >= limit) return out;
    }
    if (!page.next || *page.next == token) break;
    token = *page.next;
  }
  return out;
}

std::string Client::create_multipart(const ObjectUrl& url, const Metadata& metadata) {
  Call c{"POST", &url, "uploads="};
  // Every part carries its CRC-32C, which a server that knows checksums checks as it arrives.
  c.headers["x-amz-checksum-algorithm"] = "CRC32C";
  for (const auto& [k, v] : metadata) c.headers["x-amz-meta-" + k] = v;
  encryption_headers(c);
  auto r = send(c);
  return parse_upload_id(r.body, "POST " + url.text() + "?uploads");
}

Part Client::upload_part(const ObjectUrl& url, const std::string& upload_id, int number,
                         transfer::Bytes data, std::optional<Md5> md5) {
  limiter_->acquire(data.size());
  Call c{"PUT", &url,
         "partNumber=" + std::to_string(number) + "&uploadId=" + uri_encode(upload_id, false)};
  c.body = data;
  if (!md5) md5 = md5_of(data);
  const auto crc = crc32c_base64(data);
  c.headers["content-md5"] = md5_base64(*md5);
  c.headers["x-amz-checksum-crc32c"] = crc;
  auto r = send(c);
  check_stored(r, *md5, crc, "PUT " + url.text() + " part " + std::to_string(number));
  return {number, data.size(), unquote(r.headers.at("etag")), crc};
}

std::vector<Part> Client::list_parts(const ObjectUrl& url, const std::string& upload_id) {
  std::vector<Part> parts;
  std::string marker;
  for (int pages = 0; pages < 100; ++pages) {  // 10,000 parts at most, 1,000 a page
    Call c{"GET", &url, "uploadId=" + uri_encode(upload_id, false)};
    if (!marker.empty()) c.query += "&part-number-marker=" + marker;
    c.max_response = 4 << 20;
    auto r = send(c);
    auto page = parse_list_parts(r.body, "ListParts " + url.text());
    parts.insert(parts.end(), page.parts.begin(), page.parts.end());
    if (!page.next || *page.next == marker) break;
    marker = *page.next;
  }
  return parts;
}

void Client::complete_multipart(const ObjectUrl& url, const std::string& upload_id,
                                const std::vector<Part>& parts) {
  std::string body = "<CompleteMultipartUpload>";
  for (const auto& p : parts) {
    body += "<Part><PartNumber>" + std::to_string(p.number) + "</PartNumber><ETag>\"" + p.etag +
            "\"</ETag>";
    if (!p.checksum_crc32c.empty())
      body += "<ChecksumCRC32C>" + p.checksum_crc32c + "</ChecksumCRC32C>";
    body += "</Part>";
  }
  body += "</CompleteMultipartUpload>";
  Call c{"POST", &url, "uploadId=" + uri_encode(upload_id, false)};
  c.body = transfer::as_bytes(body);
  auto r = send(c);
  // S3 may answer 200 with an error in the body.
  if (auto codes = xml_values(r.body, "Code", 1); !codes.empty())
    throw Error(Errc::io, "CompleteMultipartUpload " + url.text() + ": " + codes[0]);
  check_completed(r.body, parts, "CompleteMultipartUpload " + url.text());
}

void Client::abort_multipart(const ObjectUrl& url, const std::string& upload_id) {
  Call c{"DELETE", &url, "uploadId=" + uri_encode(upload_id, false)};
  send(c);
}

std::unique_ptr<store::Store> open_store(const store::Options& options) {
  return std::make_unique<Client>(load_config(options.s3.profile), options);
}

}  // namespace nubo::s3
