// The transfer protocol's connections: nubo's TCP with deadlines (common/tcp.hpp) plus the
// protocol's framed messages (docs/protocol.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/tcp.hpp"
#include "transfer/bytes.hpp"
#include "transfer/net/wire.hpp"

namespace nubo::transfer::net {

struct Endpoint {
  std::string host;  // a name or an address, without IPv6 brackets
  std::uint16_t port = 0;
  std::string subdir;  // send only: the part after "HOST:PORT/"
  operator tcp::HostPort() const { return {host, port}; }
};
// "HOST:PORT", "[V6]:PORT", optionally followed by "/SUBDIR" when `allow_subdir`.
Endpoint parse_endpoint(const std::string& text, bool allow_subdir);

class Socket : public tcp::Socket {
 public:
  Socket() = default;
  Socket(tcp::Socket&& s) : tcp::Socket(std::move(s)) {}  // NOLINT: a connection, framed

  static Socket connect(const Endpoint& to, double timeout_seconds) {
    return tcp::Socket::connect(to, timeout_seconds);
  }

  // One framed message: the header is checked against `max_length` before anything else is
  // read, so a huge length costs nothing.
  struct Message {
    MsgType type = MsgType::error;
    std::vector<std::byte> payload;
  };
  // `chunk_size` bounds chunk messages (0: none expected); other types have their own limits.
  Message read_message(std::uint32_t max_length, std::uint32_t chunk_size = 0);
  void read_message_into(Message& m, std::uint32_t max_length, std::uint32_t chunk_size = 0);
  void write_message(MsgType type, Bytes payload);
};

using Listener = tcp::Listener;

}  // namespace nubo::transfer::net
