// An S3 client for what nubo stores: objects put whole or in parts (multipart uploads, each part
// checked by the server against its Content-MD5 and its CRC-32C), read by range, described by HEAD,
// and the multipart bookkeeping a resumed upload needs (ListParts). Every request is signed
// (SigV4), retried with exponential backoff and jitter on 5xx, 429 (SlowDown) and timeouts, and
// every response read within a bound. Errors say what a person can do: wrong credentials name the
// key id (never the secret), and a missing bucket, access denied, clock skew, a wrong region and a
// quota each get their own advice.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/http.hpp"
#include "transfer/bytes.hpp"
#include "transfer/rate.hpp"
#include "transfer/store/s3/config.hpp"
#include "transfer/store/s3/etag.hpp"
#include "transfer/store/s3/responses.hpp"
#include "transfer/store/store.hpp"

namespace nubo::s3 {

using store::Metadata;
using store::ObjectInfo;
using store::ObjectUrl;
using ClientOptions = store::Options;  // the profile is the Config's

bool is_s3_url(std::string_view text);
// "s3://BUCKET/KEY"; Error(invalid_argument) naming what is wrong (no bucket, a bucket name S3
// refuses, a key over 1024 bytes).
ObjectUrl parse_s3_url(std::string_view text);
// The same for another scheme of an S3-compatible store ("gs"): `valid_bucket` says which bucket
// names that store accepts, and `bucket_rule` says it in words.
ObjectUrl parse_bucket_url(std::string_view text, std::string_view scheme,
                           bool (*valid_bucket)(std::string_view), std::string_view bucket_rule);

class Client : public store::Store {
 public:
  explicit Client(Config config, ClientOptions options = {});
  const Config& config() const { return config_; }

  void create_bucket(const std::string& bucket) override;
  // Error(corrupt) when the server's ETag says it stored other bytes than those sent.
  void put_object(const ObjectUrl& url, transfer::Bytes body,
                  const Metadata& metadata = {}) override;
  std::optional<ObjectInfo> head_object(const ObjectUrl& url) override;
  // HEAD of part `number` (1-based) of the object: its size, and how many parts the object has.
  std::optional<ObjectInfo> head_part(const ObjectUrl& url, int number) override;
  // Bytes [offset, offset + size) of the object: exactly that many, or Error(corrupt).
  std::string get_range(const ObjectUrl& url, std::uint64_t offset, std::uint64_t size) override;
  void delete_object(const ObjectUrl& url) override;
  // Every object under url.key as a prefix (ListObjectsV2, page by page), at most `limit`.
  std::vector<std::pair<std::string, std::uint64_t>> list_objects(
      const ObjectUrl& prefix, std::size_t limit = 10000000) override;

  std::string create_multipart(const ObjectUrl& url, const Metadata& metadata) override;
  // The part as the server took it (its ETag, its CRC-32C), once the server checked its
  // Content-MD5 and CRC-32C, and its answer says it stored the bytes sent (else
  // Error(corrupt)). `md5`: the data's, when the caller has it already.
  Part upload_part(const ObjectUrl& url, const std::string& upload_id, int number,
                   transfer::Bytes data, std::optional<Md5> md5 = std::nullopt) override;
  // Every part the server holds for the upload; Error(not_found) when the upload is gone.
  std::vector<Part> list_parts(const ObjectUrl& url, const std::string& upload_id) override;
  // Error(corrupt) when the completed object's ETag, in S3's form, is not of these parts.
  void complete_multipart(const ObjectUrl& url, const std::string& upload_id,
                          const std::vector<Part>& parts) override;
  void abort_multipart(const ObjectUrl& url, const std::string& upload_id) override;

  // Another S3 client with the same key id, and the same endpoint or both AWS's (CopyObject
  // reads across AWS regions): the server can copy between them.
  bool copies_from(const store::Store& source) const override;
  std::string service() const override;
  // CopyObject, the metadata copied; Error naming the server's code, also when it reports a
  // failure inside its 200 answer (as S3 may, once the copy has started).
  std::string copy_object(const ObjectUrl& source, const ObjectUrl& to) override;
  Part upload_part_copy(const ObjectUrl& to, const std::string& upload_id, int number,
                        const ObjectUrl& source, std::uint64_t offset, std::uint64_t size) override;

 private:
  struct Call {
    Call(std::string m, const ObjectUrl* u, std::string q = {})
        : method(std::move(m)), url(u), query(std::move(q)) {}
    std::string method;
    const ObjectUrl* url = nullptr;
    std::string query;  // encoded
    std::map<std::string, std::string> headers;
    transfer::Bytes body;
    std::size_t max_response = 1 << 20;
  };
  // Signs and sends `call`, retrying what may pass; Error naming the server's code otherwise.
  http::Response send(const Call& call);
  std::optional<ObjectInfo> head(const ObjectUrl& url, const std::string& query);
  std::string url_of(const ObjectUrl& url, std::string& host, std::string& path) const;
  [[noreturn]] void fail(const Call& call, const http::Response& r) const;
  // A copy's answer: its ETag, or the error S3 wrote into a 200 answer.
  std::string copied_etag(const Call& call, const http::Response& r) const;
  // The server-side encryption asked for, on a request that writes an object.
  void encryption_headers(Call& call) const;
  // x-amz-copy-source and the server-side encryption of what is written.
  void copy_headers(Call& call, const ObjectUrl& source) const;

  Config config_;
  ClientOptions options_;
  std::shared_ptr<transfer::RateLimiter> limiter_;  // shared by the client's copies
  // Set once the server refused an UNSIGNED-PAYLOAD body (Config::unsigned_payload): the
  // client's requests sign their payloads' SHA-256 from then on. Shared by the client's copies.
  std::shared_ptr<std::atomic<bool>> payloads_signed_ = std::make_shared<std::atomic<bool>>(false);
};

// An S3 client with the configuration of `options.profile` (load_config), as the store of
// s3:// URLs.
std::unique_ptr<store::Store> open_store(const store::Options& options);

}  // namespace nubo::s3
