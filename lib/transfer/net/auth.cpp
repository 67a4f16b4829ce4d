#include "transfer/net/auth.hpp"

#include <sys/socket.h>

#include <array>
#include <chrono>

#include <cstring>

#include "nubo/error.hpp"

namespace nubo::transfer::net {
namespace {

constexpr std::string_view kClientLabel = "nubo-net-1 client";
constexpr std::string_view kServerLabel = "nubo-net-1 server";

}  // namespace

Mac client_proof(const std::string& token, Bytes hello, Bytes server_nonce) {
  std::vector<std::byte> msg;
  append(msg, as_bytes(kClientLabel));
  append(msg, hello);
  append(msg, server_nonce);
  return hmac_sha256(token, msg);
}

Mac server_proof(const std::string& token, Bytes client_nonce, Bytes server_nonce,
                 const SessionId& session) {
  std::vector<std::byte> msg;
  append(msg, as_bytes(kServerLabel));
  append(msg, client_nonce);
  append(msg, server_nonce);
  append(msg, session);
  return hmac_sha256(token, msg);
}

void send_error(Socket& s, Errc code, const std::string& text) noexcept {
  try {
    s.write_message(MsgType::error, encode_error({static_cast<std::uint16_t>(code), text}));
  } catch (...) {
  }
}

std::optional<Error> read_refusal(Socket& s) noexcept {
  if (s.encrypted()) return std::nullopt;
  try {
    s.set_timeout(1);
    auto m = s.read_message(kMaxControl);
    expect(m, MsgType::error, s.peer());
  } catch (const Error& e) {
    if (std::string(e.what()).find(" refused: ") != std::string::npos) return e;
  } catch (...) {
  }
  return std::nullopt;
}

void refuse(Socket& s, Errc code, const std::string& text) noexcept {
  send_error(s, code, text);
  try {
    ::shutdown(s.fd(), SHUT_WR);
    std::array<std::byte, 4096> sink;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < until && s.readable(100)) {
      const auto n = ::recv(s.fd(), sink.data(), sink.size(), 0);
      if (n <= 0) break;
    }
  } catch (...) {
  }
}

void expect(const Socket::Message& m, MsgType expected, const std::string& peer) {
  if (m.type == MsgType::error) {
    auto e = decode_error(m.payload);
    auto code = e.code >= 1 && e.code <= static_cast<std::uint16_t>(Errc::internal)
                    ? static_cast<Errc>(e.code)
                    : Errc::unavailable;
    throw Error(code, peer + " refused: " + e.text);
  }
  if (m.type != expected)
    throw Error(Errc::corrupt, "from " + peer + ": expected a " + msg_name(expected) +
                                   " message, got " + msg_name(m.type));
}

SessionId client_handshake(Socket& s, const std::string& token, Role role,
                           const SessionId& session) {
  Hello hello;
  hello.role = role;
  hello.session = session;
  random_bytes(hello.nonce);
  auto hello_bytes = encode_hello(hello);
  s.write_message(MsgType::hello, hello_bytes);
  auto m = s.read_message(kMaxControl);  // an error's text may be longer than a handshake
  expect(m, MsgType::challenge, s.peer());
  auto challenge = decode_challenge(m.payload);
  s.write_message(MsgType::auth, client_proof(token, hello_bytes, challenge.nonce));
  m = s.read_message(kMaxControl);
  expect(m, MsgType::welcome, s.peer());
  auto welcome = decode_welcome(m.payload);
  if (role == Role::data && welcome.session != session)
    throw Error(Errc::corrupt, s.peer() + " welcomed this stream into another session");
  if (!same_mac(welcome.mac, server_proof(token, hello.nonce, challenge.nonce, welcome.session)))
    throw Error(Errc::invalid_argument,
                s.peer() +
                    " could not prove it knows the token: it is not the server expected, "
                    "or its token differs");
  return welcome.session;
}

Accepted server_handshake(Socket& s, const std::string& token) {
  Accepted a;
  auto m = s.read_message(kMaxHandshake);
  if (m.type != MsgType::hello)
    throw Error(Errc::corrupt, std::string("expected a hello message, got ") + msg_name(m.type));
  a.hello = decode_hello(m.payload);
  random_bytes(a.server_nonce);
  s.write_message(MsgType::challenge, encode_challenge({kProtocolVersion, a.server_nonce}));
  auto reply = s.read_message(kMaxHandshake);
  if (reply.type != MsgType::auth)
    throw Error(Errc::corrupt,
                std::string("expected an auth message, got ") + msg_name(reply.type));
  auto proof = decode_mac(reply.payload, "auth message");
  if (!same_mac(proof, client_proof(token, m.payload, a.server_nonce))) {
    send_error(s, Errc::invalid_argument, "authentication failed: wrong token");
    throw Error(Errc::invalid_argument,
                "authentication failed: wrong token (or a replayed "
                "handshake)");
  }
  return a;
}

void server_welcome(Socket& s, const std::string& token, const Accepted& a,
                    const SessionId& session) {
  Welcome w;
  w.session = session;
  w.mac = server_proof(token, a.hello.nonce, a.server_nonce, session);
  s.write_message(MsgType::welcome, encode_welcome(w));
}

}  // namespace nubo::transfer::net
