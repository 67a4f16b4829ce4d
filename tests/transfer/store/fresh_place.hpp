// A fresh place in the store the test runs against (NUBO_STORE_SCHEME: s3, gs or file): a new
// bucket on the loopback server (with_s3_server.py sets the endpoint and keys of both s3:// and
// gs://), or a directory inside the test's own temporary folder.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "transfer/store/store.hpp"

namespace nubo_test {

inline std::string store_scheme() {
  const char* s = std::getenv("NUBO_STORE_SCHEME");
  return s && *s ? s : "file";
}

// "SCHEME://BUCKET/" (or "file://DIR/"), empty and ready.
inline std::string fresh_place(const std::string& temp_dir) {
  static int n = 0;
  const auto scheme = store_scheme();
  if (scheme == "file") return "file://" + temp_dir + "/store-" + std::to_string(n++) + "/";
  REQUIRE(std::getenv("NUBO_S3_TEST_SERVER"));  // never a real endpoint
  const auto bucket = "nubo-store-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
  const auto url = nubo::store::parse_url(scheme + "://" + bucket + "/");
  nubo::store::open(url)->create_bucket(bucket);
  return url.text();
}

}  // namespace nubo_test
