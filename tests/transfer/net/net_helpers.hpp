// Shared by the network tests: a server on an ephemeral loopback port, and a raw client that
// speaks the protocol by hand (to send what a well-behaved sender never would).
#pragma once

#include <filesystem>
#include <string>

#include "../helpers.hpp"
#include "nubo/net.hpp"
#include "transfer/net/auth.hpp"
#include "transfer/net/socket.hpp"

namespace nubo_test {

inline const std::string kToken = "test-token-0123456789abcdef";

// The destination is created: serve refuses a missing one unless told to --mkdir.
inline nubo::net::ServeOptions serve_options(const std::string& dest, double timeout = 5) {
  std::filesystem::create_directories(dest);
  nubo::net::ServeOptions o;
  o.listen = "127.0.0.1:0";
  o.dest = dest;
  o.token = kToken;
  o.timeout_seconds = timeout;
  o.sync = false;  // tests: durability is the kill tests' subject, not these
  return o;
}

inline nubo::net::SendOptions send_options(int streams = 2) {
  nubo::net::SendOptions o;
  o.token = kToken;
  o.streams = streams;
  o.threads = 2;
  o.timeout_seconds = 10;
  return o;
}

inline std::string dest_of(const nubo::net::Server& s, const std::string& subdir = "") {
  return "127.0.0.1:" + std::to_string(s.port()) + (subdir.empty() ? "" : "/" + subdir);
}

inline nubo::transfer::net::Socket raw_connect(const nubo::net::Server& s, double timeout = 5) {
  return nubo::transfer::net::Socket::connect({"127.0.0.1", s.port(), ""}, timeout);
}

}  // namespace nubo_test
