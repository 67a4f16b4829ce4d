// Sending files over the network: `send` pushes files and directories to a `Server` on another
// machine (docs/net.md; the wire protocol is docs/protocol.md).
//
// Chunks travel compressed with the archive codecs (codec `auto` is fed with the link's measured
// throughput) over several TCP streams, at an optional rate limit. The receiver writes each file
// under a temporary name, keeps a journal of verified chunks, and renames a file into place only
// when its whole-file XXH3-128 matches. Running the same send again after any interruption sends
// only what the receiver has not verified; files already complete at the destination are
// skipped. Every connection authenticates with a shared token by HMAC-SHA256 challenge-response;
// the token never crosses the wire.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nubo/export.hpp"
#include "nubo/transfer.hpp"

namespace nubo::net {

// What the progress callback of send() sees: the archive's progress (bytes_skipped there counts
// both skipped and resumed bytes) plus what went over the wire.
struct SendProgress : transfer::Progress {
  std::uint64_t wire_bytes = 0;     // bytes written to the sockets, framing included
  double link_rate = 0;             // wire bytes per second over the last seconds
  std::uint64_t bytes_resumed = 0;  // verified by an earlier, interrupted attempt
};
// Called from one thread, at most every 100 ms and once at the end; false cancels: nothing more
// is read, the messages already queued for the wire are delivered (for at most 5 s, so the next
// send need not repeat them), and the call throws Error(cancelled). What the receiver verified
// stays verified.
using SendProgressFn = std::function<bool(const SendProgress&)>;

constexpr int kDefaultStreams = 4;
constexpr double kDefaultTimeoutSeconds = 30;

struct SendOptions {
  transfer::Codec codec = transfer::Codec::automatic;
  int level = 0;  // 0: the codec's default
  std::uint64_t chunk_size = transfer::kDefaultChunkSize;
  int threads = 0;  // compression threads; 0: every core
  std::uint64_t memory_limit = transfer::kDefaultMemory;
  int streams = kDefaultStreams;  // TCP connections in parallel, 1..64
  double rate = 0;                // bytes/s on the wire, all streams together; 0: unlimited
  std::string token;              // the shared secret; empty: NUBO_TOKEN
  double timeout_seconds = kDefaultTimeoutSeconds;  // a peer silent this long is given up
  // TLS 1.3 on every connection (docs/net.md, "Encryption"): a key derived from the token, or
  // with ca_file the server's certificate checked against that CA and server_name (default:
  // the destination's host). false: in the clear, for trusted links only (a warning is
  // logged, and a server started with require_encryption refuses).
  bool encrypt = true;
  std::string ca_file;
  std::string server_name;
  std::vector<std::string> exclude, include;  // as PackOptions's
  SendProgressFn progress;
};

struct SendSummary {
  std::uint64_t files = 0, directories = 0, symlinks = 0;
  std::uint64_t bytes = 0;          // logical bytes of every file
  std::uint64_t bytes_sent = 0;     // logical bytes of the chunks sent this time
  std::uint64_t bytes_skipped = 0;  // files complete and identical at the destination
  std::uint64_t bytes_resumed = 0;  // chunks an interrupted attempt had verified
  std::uint64_t wire_bytes = 0;     // bytes written to the sockets
  // Of bytes_sent, those of small files identical to one sent before in the same send: the
  // receiver copied them from that file.
  std::uint64_t bytes_deduplicated = 0;
  std::uint64_t chunks_sent = 0;
  transfer::ChunkCounts chunks_by_codec{};  // of chunks_sent
  int streams = 0;
  double seconds = 0;
};

// Sends `sources` (files, directories recursively, symlinks as links) to the server at
// `destination`, "HOST:PORT" or "HOST:PORT/SUBDIR" ("[::1]:PORT" for IPv6). Names are as in
// transfer::pack: "data" arrives as DEST/SUBDIR/data. Throws Error(unavailable) when the server
// cannot be reached or the connection is lost (run it again to resume), Error(invalid_argument)
// for a refused token, and Error(corrupt) with the server's reason for a refused entry.
NUBO_API SendSummary send(const std::vector<std::string>& sources, const std::string& destination,
                          const SendOptions& options = {});

struct ServeOptions {
  std::string listen = "127.0.0.1:0";  // ADDR:PORT; port 0 picks a free one (see Server::port)
  std::string dest;                    // every write lands below this directory
  std::string token;                   // the shared secret; empty: NUBO_TOKEN
  double timeout_seconds = kDefaultTimeoutSeconds;
  int max_connections = 64;  // authenticated connections; more are refused with a message
  bool sync = true;          // fdatasync files before renaming them and before journal commits
  // TLS (docs/net.md, "Encryption"): every client that offers it gets it (a key derived from
  // the token, or this certificate and key when given); require_encryption refuses clients
  // that come in the clear (--no-encryption), which are otherwise served with a warning.
  std::string cert_file, key_file;
  bool require_encryption = false;
  // Hostile load (docs/net.md, "Under a flood"): a client has this long to finish its handshake
  // (TLS and the token), however slowly it drips bytes; connections not yet authenticated have
  // a budget of their own, at most max_pending_per_address per address. When it is full, only
  // a connection that has sent nothing makes way for a newcomer; an address whose connections
  // keep coming to nothing is refused for a while.
  double handshake_seconds = 10;
  int max_pending = 16;
  int max_pending_per_address = 4;
  bool mkdir = false;  // create `dest` when missing (else a missing dest is an error)
  // Keep setuid, setgid and sticky bits of received files (dropped by default).
  bool preserve_special_modes = false;
};

struct ServerStats {
  std::uint64_t connections = 0;  // accepted
  std::uint64_t refused = 0;      // failed authentication, malformed, over the cap, timed out
  std::uint64_t sessions = 0;     // sends completed
  std::uint64_t files = 0;        // files renamed into place
  std::uint64_t bytes = 0;        // logical bytes written
};

// A receiving server: listens from construction, serves each connection on its own thread, and
// stops (closing every connection, keeping what was verified) on stop() or destruction.
class NUBO_API Server {
 public:
  explicit Server(const ServeOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::uint16_t port() const;
  std::string address() const;  // "127.0.0.1:PORT"
  ServerStats stats() const;
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a token file: its content without a trailing newline. Error(invalid_argument) when it is
// empty, unreadable, or readable by others than its owner (mode & 077).
NUBO_API std::string read_token_file(const std::string& path);

}  // namespace nubo::net
