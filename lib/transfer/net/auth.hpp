// Challenge-response authentication with a shared token (docs/protocol.md, "Handshake").
//
// Both sides contribute a fresh 32-byte random nonce; the client proves it knows the token with
// HMAC-SHA256(token, "nubo-net-1 client" | hello | server nonce), the server answers with
// HMAC-SHA256(token, "nubo-net-1 server" | client nonce | server nonce | session id). The token
// never crosses the wire, and since the server's nonce is new for every connection, a recorded
// handshake replayed later fails. Both MACs are compared in constant time.
#pragma once

#include <optional>
#include <string>

#include "common/crypto.hpp"
#include "transfer/net/socket.hpp"
#include "transfer/net/wire.hpp"

namespace nubo::transfer::net {

using SessionId = std::array<std::byte, kSessionIdSize>;

using crypto::hmac_sha256;
using crypto::random_bytes;
using crypto::same_mac;

Mac client_proof(const std::string& token, Bytes hello, Bytes server_nonce);
Mac server_proof(const std::string& token, Bytes client_nonce, Bytes server_nonce,
                 const SessionId& session);

// The client's side: returns the session id (the new one for a control stream). A refusal from
// the server is an Error with the server's reason; a server that cannot prove the token is
// Error(invalid_argument) too (it is not the server we think).
SessionId client_handshake(Socket& s, const std::string& token, Role role,
                           const SessionId& session);

// The server's side, up to checking the client's proof. `new_session` is the id a control
// stream gets. On a wrong proof it tells the client, and throws Error(invalid_argument).
struct Accepted {
  Hello hello;
  std::array<std::byte, kNonceSize> server_nonce{};
};
Accepted server_handshake(Socket& s, const std::string& token);
void server_welcome(Socket& s, const std::string& token, const Accepted& a,
                    const SessionId& session);

// Sends an error message, ignoring failures (the connection is being given up).
void send_error(Socket& s, Errc code, const std::string& text) noexcept;

// The error a server sent in the clear before refusing a connection (busy, encryption
// required), when that is what is waiting on `s`; nullopt otherwise.
std::optional<Error> read_refusal(Socket& s) noexcept;

// Ends a connection being refused without losing the reason on the way: the error message, the
// end of writing, then what the peer still sends is read (for up to 2 s), so that closing (the
// caller's part, once it forgot the descriptor) does not answer it with a reset that drops the
// message.
void refuse(Socket& s, Errc code, const std::string& text) noexcept;

// Throws the Error an error message carries; otherwise checks the message is `expected`.
void expect(const Socket::Message& m, MsgType expected, const std::string& peer);

}  // namespace nubo::transfer::net
