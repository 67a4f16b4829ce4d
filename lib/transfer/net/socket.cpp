#include "transfer/net/socket.hpp"

#include "nubo/error.hpp"

namespace nubo::transfer::net {

Endpoint parse_endpoint(const std::string& text, bool allow_subdir) {
  Endpoint e;
  std::string hostport = text;
  if (allow_subdir) {
    // The subdirectory starts at the first '/' after the port (IPv6 addresses have no '/').
    auto colon = text.rfind(':', text.find('/'));
    auto slash = colon == std::string::npos ? std::string::npos : text.find('/', colon);
    if (slash != std::string::npos) {
      e.subdir = text.substr(slash + 1);
      hostport = text.substr(0, slash);
      while (!e.subdir.empty() && e.subdir.back() == '/') e.subdir.pop_back();
    }
  }
  try {
    const tcp::HostPort hp = tcp::parse_host_port(hostport);
    e.host = hp.host;
    e.port = hp.port;
  } catch (const Error& err) {
    // Named as the user wrote it, with the form this command takes.
    std::string why = err.what();
    why = why.substr(why.find("': ") + 3);
    why = why.substr(0, why.rfind(" (expected"));
    throw Error(Errc::invalid_argument,
                "address '" + text + "': " + why +
                    (allow_subdir ? " (expected HOST:PORT[/SUBDIR])" : " (expected ADDR:PORT)"));
  }
  return e;
}

void Socket::read_message_into(Message& m, std::uint32_t max_length, std::uint32_t chunk_size) {
  std::array<std::byte, kFrameHeaderSize> h;
  read_exact(h);
  auto fh = decode_frame_header(h, max_length);
  if (fh.length > max_payload(fh.type, chunk_size)) {
    throw Error(Errc::corrupt, std::string(msg_name(fh.type)) + " message: length " +
                                   std::to_string(fh.length) + " exceeds its limit of " +
                                   std::to_string(max_payload(fh.type, chunk_size)) + " bytes");
  }
  m.type = fh.type;
  m.payload.resize(fh.length);
  read_exact(m.payload);
}

Socket::Message Socket::read_message(std::uint32_t max_length, std::uint32_t chunk_size) {
  Message m;
  read_message_into(m, max_length, chunk_size);
  return m;
}

void Socket::write_message(MsgType type, Bytes payload) {
  auto h = encode_frame_header(type, static_cast<std::uint32_t>(payload.size()));
  write_all(h);
  write_all(payload);
}

}  // namespace nubo::transfer::net
