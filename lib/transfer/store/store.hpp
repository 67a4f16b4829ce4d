// The object store seam (docs/layers.md): everything nubo writes to or reads from a remote place
// goes through this interface, whichever the place: S3 (s3/), Google Cloud Storage through its
// S3-compatible XML API (gcs/), or a shared file system mounted here (file/). Its calls are those
// an object store offers, shaped as S3's: HEAD, a ranged GET, a whole PUT, and the multipart
// upload (begin, put a part, list the parts held, complete, abort), which is what makes an
// interrupted upload resumable. A new store is a folder implementing Store and one row in
// registry.cpp's table of URL schemes.
//
// The contract every store keeps (tests/transfer/store/conformance_test.cpp checks it against
// each):
//  - an object appears under its name only whole: a PUT or a completed multipart upload, never
//    a half-written one;
//  - a part's ETag is the hex MD5 of its bytes, so that a resumed upload can tell which parts the
//    store holds are the ones it would send again;
//  - get_range returns exactly the bytes asked for, or throws Error(corrupt);
//  - a missing object is nullopt from head_object and Error(not_found) elsewhere; a missing
//    bucket or directory is Error(not_found) naming it; an upload the store forgot (expired,
//    aborted) is Error(not_found) from list_parts;
//  - every call is safe from several threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transfer/bytes.hpp"
#include "transfer/store/md5.hpp"

namespace nubo::store {

// "SCHEME://BUCKET/KEY". The key may be empty or end with '/': a prefix. For file:// the bucket
// is empty and the key is the absolute path without its leading '/'.
struct ObjectUrl {
  std::string bucket, key;
  std::string scheme = "s3";
  std::string text() const { return scheme + "://" + bucket + "/" + key; }
  // The same bucket of the same store, another key.
  ObjectUrl with_key(std::string other) const { return {bucket, std::move(other), scheme}; }
  bool is_prefix() const { return key.empty() || key.back() == '/'; }
};

using Metadata = std::map<std::string, std::string>;  // names lower-case, as x-amz-meta-NAME

struct ObjectInfo {
  std::uint64_t size = 0;  // of the object, or of the part asked for
  // Changes whenever the content does. S3's is the MD5 form etag.hpp reads; a store with none
  // gives another (file/: size and modification time), which says nothing about the content.
  std::string etag;
  Metadata metadata;
  std::string server_side_encryption;  // x-amz-server-side-encryption: "AES256", "aws:kms"
  bool customer_key = false;           // SSE-C: the ETag is not the content's MD5
  int parts = 0;                       // x-amz-mp-parts-count (asked for a part; 0: not told)
};

struct Part {
  int number = 0;
  std::uint64_t size = 0;
  std::string etag;             // the hex MD5 of the part's bytes, without quotes
  std::string checksum_crc32c;  // base64, as S3 gives it; empty when the store gave none
};

// What a store is opened for. An S3 store checks each request against the permissions the
// operation is documented to need (s3/permissions.hpp, the table `nubo-xfer policy` prints);
// `any` checks nothing (tests and tools that use a store directly).
enum class Operation { any, pack, unpack, cp, sync, checkpoint };

// What only an S3-compatible store reads. Another store refuses a setting it cannot honour
// (encryption asked of a store that would not apply it) rather than drop it.
struct S3Settings {
  std::string profile;  // the AWS profile; empty: AWS_PROFILE or "default"
  // Server-side encryption passed through: "AES256" or "aws:kms" (with kms_key_id).
  std::string server_side_encryption, kms_key_id;
};

// What a store may be asked for when it is opened: what every store takes, then a block per
// kind of store.
struct Options {
  Operation operation = Operation::any;
  int retries = 6;  // attempts after the first, for what may pass (5xx, 429, timeouts)
  double timeout_seconds = 30;
  // Bytes per second of object data (bodies sent and ranges fetched) over every call of the
  // store together; 0: unlimited.
  double rate = 0;
  S3Settings s3;
};

class Store {
 public:
  virtual ~Store() = default;

  // Makes the bucket (a directory for file://); the tests' way to a fresh place.
  virtual void create_bucket(const std::string& bucket) = 0;
  // Error(corrupt) when the store says it holds other bytes than those sent.
  virtual void put_object(const ObjectUrl& url, transfer::Bytes body,
                          const Metadata& metadata = {}) = 0;
  virtual std::optional<ObjectInfo> head_object(const ObjectUrl& url) = 0;
  // HEAD of part `number` (1-based) of a multipart object: its size, and how many parts the
  // object has; nullopt where the store cannot tell (then an ETag check cannot be made).
  virtual std::optional<ObjectInfo> head_part(const ObjectUrl& url, int number) = 0;
  // Bytes [offset, offset + size) of the object: exactly that many, or Error(corrupt).
  virtual std::string get_range(const ObjectUrl& url, std::uint64_t offset, std::uint64_t size) = 0;
  virtual void delete_object(const ObjectUrl& url) = 0;
  // Every object under url.key as a prefix, sorted by key, with its size; at most `limit`.
  virtual std::vector<std::pair<std::string, std::uint64_t>> list_objects(
      const ObjectUrl& prefix, std::size_t limit = 10000000) = 0;

  virtual std::string create_multipart(const ObjectUrl& url, const Metadata& metadata) = 0;
  // The part as the store took it. `md5`: the data's, when the caller has it already.
  virtual Part upload_part(const ObjectUrl& url, const std::string& upload_id, int number,
                           transfer::Bytes data, std::optional<Md5> md5 = std::nullopt) = 0;
  virtual std::vector<Part> list_parts(const ObjectUrl& url, const std::string& upload_id) = 0;
  // The object becomes these parts, in this order; Error(corrupt) when the store holds other
  // bytes for one of them.
  virtual void complete_multipart(const ObjectUrl& url, const std::string& upload_id,
                                  const std::vector<Part>& parts) = 0;
  virtual void abort_multipart(const ObjectUrl& url, const std::string& upload_id) = 0;

  // Copies made by the store itself, the bytes never leaving it: for a `source` store that
  // this one reaches with its own credentials (S3: the same account and endpoint). A store that
  // cannot never says copies_from, and copy_between streams through this machine instead.
  virtual bool copies_from(const Store& /*source*/) const { return false; }
  // Where this store's buckets live: two stores of one service hold the same bucket under the
  // same name (S3: its endpoint, every AWS endpoint one service; file://: this machine).
  virtual std::string service() const = 0;
  // The whole object (S3's CopyObject, up to 5 GiB), its metadata with it; the new object's
  // ETag.
  virtual std::string copy_object(const ObjectUrl& source, const ObjectUrl& to);
  // Bytes [offset, offset + size) of `source` as part `number` of a multipart upload of `to`
  // (S3's UploadPartCopy).
  virtual Part upload_part_copy(const ObjectUrl& to, const std::string& upload_id, int number,
                                const ObjectUrl& source, std::uint64_t offset, std::uint64_t size);
};

// Whether `text` starts with a registered store's "SCHEME://".
bool is_url(std::string_view text);
// Error(invalid_argument) naming what is wrong: an unknown scheme, no bucket, a bucket name the
// store refuses, a key too long, a file:// URL naming another host.
ObjectUrl parse_url(std::string_view text);
// The store `url` lives in, with its credentials read as that store documents them
// (Error(invalid_argument) when they are missing or malformed).
std::unique_ptr<Store> open(const ObjectUrl& url, const Options& options = {});
// The same with the default options, opened for `operation`.
std::unique_ptr<Store> open(const ObjectUrl& url, Operation operation);
// The registered schemes, "s3, gs, file", for messages and help.
std::string schemes_text();

}  // namespace nubo::store
