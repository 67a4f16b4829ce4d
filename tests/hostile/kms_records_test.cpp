// A KMS record comes from outside (an archive's header, an object's metadata, an upload's
// journal): it may name where KMS is asked, never where a reader's signed request goes.
//  - every part of its ARN is checked where the record is read: the userinfo, port, path and CRLF
//    forms that once sent the request elsewhere (or into the Authorization header) are corrupt;
//  - a record in another region than the configured one is refused unless the reader asked for
//    that region (kms-region:REGION) or named the key;
//  - the key KMS says it used must be the one the record names: a record whose ARN was rewritten
//    does not open. A fake KMS on loopback (Python) plays the part.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "../transfer/helpers.hpp"
#include "common/text.hpp"
#include "error_of.hpp"
#include "scoped_env.hpp"
#include "transfer/format/format.hpp"
#include "transfer/keys/archive_keys.hpp"
#include "transfer/keys/object_cipher.hpp"
#include "transfer/store/s3/config.hpp"
#include "transfer/store/s3/kms.hpp"

using nubo_test::contains;
using nubo_test::error_of;
using nubo_test::ScopedEnv;
namespace format = nubo::transfer::format;

namespace {

const std::string kGood =
    "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";

format::KmsKey record_of(const std::string& arn) {
  return format::KmsKey{arn, std::vector<std::byte>(64, std::byte{7})};
}

// A KMS on loopback that answers every Decrypt with `key_id` and 32 bytes of plaintext, and
// writes the Host header of each request it got to `hosts`.
struct FakeKms {
  int port = 0;
  pid_t pid = -1;
  std::string hosts;
  explicit FakeKms(const std::string& key_id, const std::string& dir) {
    hosts = dir + "/hosts";
    const std::string script = R"(
import base64, json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get('Content-Length') or 0))
        open(sys.argv[2], 'a').write(self.headers.get('Host', '') + '\n')
        body = json.dumps({'KeyId': sys.argv[1],
                           'Plaintext': base64.b64encode(bytes(32)).decode()}).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/x-amz-json-1.1')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
s = HTTPServer(('127.0.0.1', 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
)";
    int out[2];
    REQUIRE(::pipe(out) == 0);
    pid = ::fork();
    if (pid == 0) {
      ::dup2(out[1], 1);
      ::execl("/usr/bin/python3", "python3", "-c", script.c_str(), key_id.c_str(), hosts.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    char buf[32] = {};
    REQUIRE(::read(out[0], buf, sizeof buf - 1) > 0);
    ::close(out[0]);
    port = std::atoi(buf);
  }
  ~FakeKms() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// The fake KMS, and the configuration that reaches it: us-east-1, one attempt.
struct KmsOnLoopback {
  nubo_test::TempDir dir;
  FakeKms kms{kGood, dir.path()};
  std::string endpoint = "http://127.0.0.1:" + std::to_string(kms.port);
  ScopedEnv key{"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"}, secret{"AWS_SECRET_ACCESS_KEY", "secret"},
      region{"AWS_REGION", "us-east-1"}, at{"AWS_ENDPOINT_URL_KMS", endpoint.c_str()},
      attempts{"AWS_MAX_ATTEMPTS", "1"};
};

}  // namespace

TEST_CASE("a KMS record's ARN is checked in full wherever the record is read", "[kms]") {
  for (const std::string hostile : {"arn:aws:kms:x@127.0.0.1/#:123456789012:key/1234abcd",
                                    "arn:aws:kms:us-east-1.evil.example:123456789012:key/1234abcd",
                                    "arn:aws:kms:127.0.0.1%3a443:123456789012:key/1234abcd",
                                    "arn:aws:kms:us-east-1/x:123456789012:key/1234abcd",
                                    "arn:aws:kms:us-east-1\r\nX-Evil: 1:123456789012:key/1234abcd",
                                    "arn:aws:kms:*:123456789012:key/1234abcd", "alias/backups"}) {
    INFO(nubo::printable(hostile));
    // The record is sealed (its check holds): only its content is hostile.
    const auto bytes = format::encode_kms_record(record_of(hostile));
    nubo::Errc code{};
    CHECK(contains(error_of([&] { format::decode_kms_record(bytes, "a.nubo"); }, &code),
                   "a.nubo: the KMS record's key"));
    CHECK(code == nubo::Errc::corrupt);
    // The same record in an object's metadata.
    const auto block = format::encode_key_block(format::KeyBlock{});
    nubo::store::Metadata metadata{
        {"nubo-encryption", "aes-256-gcm-1m-v1"},
        {"nubo-key-block", nubo::text::hex(block.data(), block.size())},
        {"nubo-kms-record", nubo::text::base64(bytes.data(), bytes.size())}};
    const auto e = error_of([&] {
      nubo::store::ObjectCipher::for_object(nubo::transfer::KeySource(), metadata, "s3://b/k");
    });
    CHECK(contains(e, "s3://b/k"));
    CHECK(contains(e, "is not a KMS key"));
  }
}

TEST_CASE("a record in another region is refused unless the reader asked for it", "[kms]") {
  KmsOnLoopback on;
  const auto& kms = on.kms;
  const std::string west = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd";
  const format::KeyBlock block{};
  const auto e =
      error_of([&] { nubo::transfer::KeySource().open(block, record_of(west), "a.nubo"); });
  CHECK(contains(e, "a.nubo is encrypted under KMS key " + west + " in region us-west-2"));
  CHECK(contains(e, "--kms-region us-west-2"));
  // Nothing was asked of any KMS.
  CHECK(std::system(("test ! -s '" + kms.hosts + "'").c_str()) == 0);
  // Asked for: KMS answers for the other key, and the record's ARN is compared with it.
  const auto asked = error_of([&] {
    nubo::transfer::KeySource::parse("kms-region:us-west-2").open(block, record_of(west), "a.nubo");
  });
  CHECK(contains(asked, "KMS opened it with key " + kGood));
  CHECK(contains(asked, "the record was altered"));
  CHECK(contains(error_of([] { nubo::transfer::KeySource::parse("kms-region:x@y"); }),
                 "is not an AWS region"));
}

TEST_CASE("the key KMS says it used must be the one the record names", "[kms]") {
  KmsOnLoopback on;
  const auto& kms = on.kms;
  auto client = nubo::s3::open_kms(nubo::s3::load_config("", nubo::s3::Service::kms), "us-east-1");
  const std::vector<std::byte> wrapped(64, std::byte{7});
  // Four rewritten ARNs, all well-formed, once all opened.
  for (const std::string rewritten :
       {"arn:aws:kms:us-east-1:123456789012:key/ffffffff-12ab-34cd-56ef-1234567890ab",
        "arn:aws:kms:us-east-1:210987654321:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        "arn:aws:kms:us-east-1:123456789012:alias/backups",
        "arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"}) {
    nubo::Errc code{};
    const auto e = error_of(
        [&] {
          client.decrypt(wrapped, {{"nubo-archive", "00"}}, "", rewritten);
        },
        &code);
    CHECK(contains(e, "the record was altered"));
    CHECK(code == nubo::Errc::corrupt);
  }
  CHECK_NOTHROW(client.decrypt(wrapped, {{"nubo-archive", "00"}}, "", kGood));
  // Every request went to the configured endpoint.
  CHECK(std::system(("test \"$(sort -u '" + kms.hosts +
                     "')\" = '127.0.0.1:" + std::to_string(kms.port) + "'")
                        .c_str()) == 0);
}
