// Signature V4 against the examples of the S3 API reference ("Examples: Signature Calculations
// in AWS Signature Version 4"): the same credentials, date, requests and signatures.
#include <catch2/catch.hpp>

#include "transfer/store/s3/sigv4.hpp"

namespace s3 = nubo::s3;

namespace {

const s3::Credentials kExample{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                               ""};
const std::string kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

s3::SignInput request(const std::string& method, const std::string& path,
                      const std::string& query) {
  s3::SignInput in;
  in.method = method;
  in.path = path;
  in.query = query;
  in.headers["Host"] = "examplebucket.s3.amazonaws.com";
  in.payload_sha256 = kEmpty;
  in.amz_date = "20130524T000000Z";
  in.region = "us-east-1";
  return in;
}

std::string signature_of(const std::string& authorization) {
  return authorization.substr(authorization.find("Signature=") + 10);
}

}  // namespace

TEST_CASE("SigV4 signs the S3 reference examples", "[s3]") {
  SECTION("GET object with a range") {
    auto in = request("GET", "/test.txt", "");
    in.headers["Range"] = "bytes=0-9";
    auto auth = s3::sign(in, kExample);
    CHECK(auth ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
          "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
          "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    CHECK(in.headers.at("x-amz-date") == "20130524T000000Z");
  }
  SECTION("PUT object") {
    std::string path = "/";
    path += s3::uri_encode("test$file.text", true);
    auto in = request("PUT", path, "");
    in.headers["Date"] = "Fri, 24 May 2013 00:00:00 GMT";
    in.headers["x-amz-storage-class"] = "REDUCED_REDUNDANCY";
    in.payload_sha256 = s3::sha256_hex("Welcome to Amazon S3.");
    CHECK(in.payload_sha256 == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    CHECK(signature_of(s3::sign(in, kExample)) ==
          "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
  }
  SECTION("GET bucket lifecycle") {
    auto in = request("GET", "/", "lifecycle=");
    CHECK(signature_of(s3::sign(in, kExample)) ==
          "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  }
  SECTION("list objects, the query in any order") {
    auto in = request("GET", "/", "prefix=J&max-keys=2");
    CHECK(signature_of(s3::sign(in, kExample)) ==
          "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
  }
}

TEST_CASE("SigV4 helpers encode, hash and date as AWS does", "[s3]") {
  CHECK(s3::uri_encode("a b/c~d*", true) == "a%20b/c~d%2A");
  CHECK(s3::uri_encode("a/b", false) == "a%2Fb");
  CHECK(s3::sha256_hex("") == kEmpty);
  CHECK(s3::amz_date(1369353600) == "20130524T000000Z");
  auto in = request("GET", "/", "");
  s3::sign(in, {"AKID", "secret", "token"});
  CHECK(in.headers.at("x-amz-security-token") == "token");
}
