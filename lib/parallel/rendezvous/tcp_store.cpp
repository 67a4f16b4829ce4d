// The tcp:// rendezvous store (tcp_store.hpp): a server thread in the job's rank-0 process, one
// connection per client process.
//
// Protocol (all integers little-endian):
//   client -> server  "NUBOSTORE1" | has_token (u8) | client nonce (32)
//   server -> client  "NUBOSTORE1" | has_token (u8) | server nonce (32) | proof (32, token only)
//   client -> server  proof (32, token only); the server answers one status byte, 0 = welcome
//   then requests    op (u8: 1 set, 2 get) | key length (u16) | value length (u32) | key | value
//                    | MAC (32, token only)
//   and answers      status (u8: 0 ok, 1 not found, 2 refused) | length (u32) | value
//                    | MAC (32, token only)
// With a token (NUBO_TOKEN) both sides prove they know it (HMAC-SHA256 over both nonces, with
// a label per direction) and every message after the handshake carries an HMAC under a session
// key derived from the token and both nonces, over its direction, its sequence number and its
// bytes: a message cannot be forged, altered, replayed or reordered. Every length is checked
// against its limit before anything is allocated.
#include "parallel/rendezvous/tcp_store.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common/crypto.hpp"
#include "common/log.hpp"
#include "common/tcp.hpp"
#include "nubo/error.hpp"

namespace nubo::parallel {
namespace {

using Bytes = std::span<const std::byte>;
constexpr char kMagic[] = "NUBOSTORE1";
constexpr std::size_t kMagicSize = sizeof kMagic - 1;
constexpr std::size_t kNonce = 32;
constexpr std::size_t kMac = 32;
constexpr std::size_t kMaxKey = 256;
// What the server keeps in all: the rendezvous holds small records, never this much.
constexpr std::size_t kMaxTotal = std::size_t{256} << 20;
constexpr std::uint8_t kSet = 1, kGet = 2, kSetIfAbsent = 3;
constexpr std::uint8_t kOk = 0, kNotFound = 1, kRefused = 2;

using Nonce = std::array<std::byte, kNonce>;

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

crypto::Mac proof(const std::string& token, const char* label, const Nonce& a, const Nonce& b) {
  const std::string l = label;
  return crypto::hmac_sha256(token, {as_bytes(l), a, b});
}

void put_u16(std::vector<std::byte>& v, std::uint16_t x) {
  for (int i = 0; i < 2; ++i) v.push_back(static_cast<std::byte>((x >> (8 * i)) & 0xff));
}
void put_u32(std::vector<std::byte>& v, std::uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::byte>((x >> (8 * i)) & 0xff));
}
std::uint32_t get_u(const std::byte* p, int n) {
  std::uint32_t x = 0;
  for (int i = 0; i < n; ++i) x |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return x;
}

// One side of an authenticated conversation: seals what it sends and checks what it gets.
class Channel {
 public:
  Channel(tcp::Socket& socket, std::string session_key, bool client)
      : socket_(socket), key_(std::move(session_key)), client_(client) {}

  void send(std::vector<std::byte> message) {
    if (!key_.empty()) {
      const crypto::Mac m = mac(client_, send_seq_++, message);
      message.insert(message.end(), m.begin(), m.end());
    }
    socket_.write_all(message);
  }

  // Reads `header_size` bytes, asks `body_size` how many more follow (checking limits), reads
  // them, and checks the MAC over both. Returns the whole message.
  template <class BodySize>
  std::vector<std::byte> receive(std::size_t header_size, BodySize body_size) {
    std::vector<std::byte> message(header_size);
    socket_.read_exact(message);
    const std::size_t body = body_size(message.data());
    message.resize(header_size + body);
    socket_.read_exact(std::span<std::byte>(message).subspan(header_size));
    if (!key_.empty()) {
      crypto::Mac got{};
      socket_.read_exact(got);
      if (!crypto::same_mac(got, mac(!client_, recv_seq_++, message)))
        throw Error(Errc::corrupt, "a message from " + socket_.peer() +
                                       " failed its MAC: altered, replayed or not from the job");
    }
    return message;
  }

 private:
  crypto::Mac mac(bool from_client, std::uint64_t seq, Bytes message) const {
    std::vector<std::byte> head;
    head.push_back(static_cast<std::byte>(from_client ? 'c' : 's'));
    put_u32(head, static_cast<std::uint32_t>(seq));
    put_u32(head, static_cast<std::uint32_t>(seq >> 32));
    return crypto::hmac_sha256(key_, {head, message});
  }

  tcp::Socket& socket_;
  std::string key_;  // empty: no token, nothing sealed
  bool client_;
  std::uint64_t send_seq_ = 0, recv_seq_ = 0;
};

std::string session_key(const std::string& token, const Nonce& client, const Nonce& server) {
  if (token.empty()) return {};
  const crypto::Mac k = proof(token, "nubo-store-1 session", client, server);
  return std::string(reinterpret_cast<const char*>(k.data()), k.size());
}

std::vector<std::byte> hello(bool has_token, const Nonce& nonce) {
  std::vector<std::byte> h(reinterpret_cast<const std::byte*>(kMagic),
                           reinterpret_cast<const std::byte*>(kMagic) + kMagicSize);
  h.push_back(static_cast<std::byte>(has_token ? 1 : 0));
  h.insert(h.end(), nonce.begin(), nonce.end());
  return h;
}

// Reads the other side's hello; Error(unavailable) when it is not a nubo store's.
std::pair<bool, Nonce> read_hello(tcp::Socket& s) {
  std::array<std::byte, kMagicSize + 1 + kNonce> h{};
  s.read_exact(h);
  if (std::memcmp(h.data(), kMagic, kMagicSize) != 0)
    throw Error(Errc::unavailable, s.peer() + " does not speak nubo's rendezvous protocol");
  Nonce n{};
  std::memcpy(n.data(), h.data() + kMagicSize + 1, kNonce);
  return {h[kMagicSize] == std::byte{1}, n};
}

// --- Server ---------------------------------------------------------------------------------

class Server {
 public:
  Server(std::uint16_t port, std::string token)
      : listener_(tcp::HostPort{"", port}, 1024), token_(std::move(token)) {
    accepter_ = std::thread([this] { accept_loop(); });
  }

  ~Server() {
    stopping_ = true;
    listener_.stop();
    accepter_.join();
    // Wake every connection's thread (a shutdown socket fails its read at once), then wait.
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [id, c] : clients_) c.socket->shutdown();
    for (auto& [id, c] : clients_) c.thread.join();
  }

 private:
  struct Client {
    std::unique_ptr<tcp::Socket> socket;
    std::thread thread;
  };

  void accept_loop() {
    while (!stopping_) {
      // Connections idle between requests for as long as a job runs: the read timeout is long.
      tcp::Socket s = listener_.accept(200, 86400);
      if (!s) continue;
      const std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) break;
      Client& c = clients_[next_id_++];
      c.socket = std::make_unique<tcp::Socket>(std::move(s));
      c.thread = std::thread([this, &raw = *c.socket] { serve(raw); });
    }
  }

  void serve(tcp::Socket& raw) {
    try {
      const Nonce client_nonce = read_hello(raw).second;
      Nonce server_nonce{};
      crypto::random_bytes(server_nonce);
      auto out = hello(!token_.empty(), server_nonce);
      if (!token_.empty()) {
        const crypto::Mac p = proof(token_, "nubo-store-1 server", client_nonce, server_nonce);
        out.insert(out.end(), p.begin(), p.end());
      }
      raw.write_all(out);
      if (!token_.empty()) {
        crypto::Mac got{};
        raw.read_exact(got);
        const bool ok =
            crypto::same_mac(got, proof(token_, "nubo-store-1 client", client_nonce, server_nonce));
        const std::byte status{static_cast<unsigned char>(ok ? kOk : kRefused)};
        raw.write_all(std::span<const std::byte>(&status, 1));
        if (!ok) {
          log::warn("rendezvous store: refused " + raw.peer() +
                    ": it does not know the job's token");
          return;
        }
      } else {
        const std::byte status{kOk};
        raw.write_all(std::span<const std::byte>(&status, 1));
      }
      Channel ch(raw, session_key(token_, client_nonce, server_nonce), false);
      for (;;) answer(ch);
    } catch (const Error&) {
      // A client that left (its job finished or failed), or one that broke the protocol: its
      // connection ends here; the others are unaffected.
    }
  }

  void answer(Channel& ch) {
    const auto m = ch.receive(7, [](const std::byte* h) {
      const std::uint32_t key = get_u(h + 1, 2), value = get_u(h + 3, 4);
      if (key == 0 || key > kMaxKey || value > kMaxStoreValue)
        throw Error(Errc::corrupt, "a store request exceeds its limits");
      return static_cast<std::size_t>(key) + value;
    });
    const auto op = static_cast<std::uint8_t>(m[0]);
    const std::uint32_t key_len = get_u(m.data() + 1, 2);
    std::string key(reinterpret_cast<const char*>(m.data() + 7), key_len);
    std::string value(reinterpret_cast<const char*>(m.data() + 7 + key_len),
                      m.size() - 7 - key_len);
    std::vector<std::byte> reply;
    std::string found;
    std::uint8_t status = kOk;
    {
      const std::lock_guard<std::mutex> lock(data_mutex_);
      if (op == kSetIfAbsent && data_.count(key) != 0) {
        found = data_[key];
      } else if (op == kSet || op == kSetIfAbsent) {
        if (op == kSetIfAbsent) found = value;
        const auto it = data_.find(key);
        const std::size_t old = it == data_.end() ? 0 : it->second.size() + key.size();
        if (total_ - old + key.size() + value.size() > kMaxTotal) {
          status = kRefused;
        } else {
          total_ = total_ - old + key.size() + value.size();
          data_[key] = std::move(value);
        }
      } else if (op == kGet) {
        const auto it = data_.find(key);
        if (it == data_.end()) {
          status = kNotFound;
        } else {
          found = it->second;
        }
      } else {
        throw Error(Errc::corrupt, "unknown store request " + std::to_string(op));
      }
    }
    reply.push_back(static_cast<std::byte>(status));
    put_u32(reply, static_cast<std::uint32_t>(found.size()));
    const auto f = as_bytes(found);
    reply.insert(reply.end(), f.begin(), f.end());
    ch.send(std::move(reply));
  }

  tcp::Listener listener_;
  std::string token_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::map<std::uint64_t, Client> clients_;
  std::uint64_t next_id_ = 0;
  std::thread accepter_;
  std::mutex data_mutex_;
  std::map<std::string, std::string> data_;
  std::size_t total_ = 0;
};

// One server per port per process: every team of the process made from the same rendezvous
// shares it, and it stops when the last of them is gone.
std::shared_ptr<Server> server_for(std::uint16_t port, const std::string& token) {
  static std::mutex mutex;
  static std::map<std::uint16_t, std::weak_ptr<Server>> servers;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto s = servers[port].lock()) return s;
  auto s = std::make_shared<Server>(port, token);
  servers[port] = s;
  return s;
}

// --- Client ---------------------------------------------------------------------------------

class TcpStore final : public Store {
 public:
  TcpStore(const RendezvousUrl& url, std::shared_ptr<Server> server, const std::string& token,
           std::chrono::milliseconds timeout)
      : url_(url.text), server_(std::move(server)) {
    connect(url, token, timeout);
  }

  void set(const std::string& key, std::string_view value) override {
    check_store_entry(key, value);
    if (request(kSet, key, value).first == kRefused)
      throw Error(Errc::unavailable, "the rendezvous store " + url_ + " is full");
  }

  std::string set_if_absent(const std::string& key, std::string_view value) override {
    check_store_entry(key, value);
    auto [status, held] = request(kSetIfAbsent, key, value);
    if (status == kRefused)
      throw Error(Errc::unavailable, "the rendezvous store " + url_ + " is full");
    return std::move(held);
  }

  std::optional<std::string> try_get(const std::string& key) override {
    check_store_key(key);
    auto [status, value] = request(kGet, key, {});
    if (status == kNotFound) return std::nullopt;
    return std::move(value);
  }

  std::string describe() const override { return url_; }

 private:
  // Connects, retrying while nobody listens yet (rank 0 may start later), until the timeout.
  void connect(const RendezvousUrl& url, const std::string& token,
               std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::milliseconds(5);
    std::string last;
    for (;;) {
      try {
        socket_ = tcp::Socket::connect({url.host, static_cast<std::uint16_t>(url.port)},
                                       static_cast<double>(timeout.count()) / 1000.0);
        channel_ = std::make_unique<Channel>(socket_, handshake(token), true);
        return;
      } catch (const Error& e) {
        if (e.code() != Errc::unavailable && e.code() != Errc::timeout) throw;
        last = e.what();
      }
      if (std::chrono::steady_clock::now() + pause > deadline)
        throw Error(Errc::unavailable, "the rendezvous store " + url_ +
                                           " (hosted by rank 0's process) did not answer within " +
                                           std::to_string(timeout.count() / 1000) +
                                           " s: is rank 0 running? (" + last + ")");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(200));
    }
  }

  // The session key (empty without a token) once both sides have proved the token.
  std::string handshake(const std::string& token) {
    tcp::Socket& s = socket_;
    Nonce mine{};
    crypto::random_bytes(mine);
    s.write_all(hello(!token.empty(), mine));
    auto [server_has_token, theirs] = read_hello(s);
    const auto refuse = [&](const std::string& why) -> std::string {
      throw Error(Errc::invalid_argument, "the rendezvous store " + url_ + ": " + why);
    };
    if (server_has_token != !token.empty())
      return refuse(token.empty()
                        ? "rank 0's store requires the job's token: set NUBO_TOKEN as rank 0 has"
                        : "rank 0's store has no token but this process has NUBO_TOKEN: set it "
                          "the same everywhere");
    if (!token.empty()) {
      crypto::Mac server_proof{};
      s.read_exact(server_proof);
      if (!crypto::same_mac(server_proof, proof(token, "nubo-store-1 server", mine, theirs)))
        return refuse("rank 0's store does not know this process's NUBO_TOKEN: the tokens differ");
      const crypto::Mac p = proof(token, "nubo-store-1 client", mine, theirs);
      s.write_all(p);
    }
    std::byte status{};
    s.read_exact(std::span<std::byte>(&status, 1));
    if (status != std::byte{kOk}) return refuse("refused this process: the tokens differ");
    return session_key(token, mine, theirs);
  }

  std::pair<std::uint8_t, std::string> request(std::uint8_t op, const std::string& key,
                                               std::string_view value) {
    std::vector<std::byte> m;
    m.push_back(static_cast<std::byte>(op));
    put_u16(m, static_cast<std::uint16_t>(key.size()));
    put_u32(m, static_cast<std::uint32_t>(value.size()));
    const auto k = as_bytes(key);
    m.insert(m.end(), k.begin(), k.end());
    const auto* v = reinterpret_cast<const std::byte*>(value.data());
    m.insert(m.end(), v, v + value.size());
    const std::lock_guard<std::mutex> lock(mutex_);
    channel_->send(std::move(m));
    const auto reply = channel_->receive(5, [](const std::byte* h) {
      const std::uint32_t n = get_u(h + 1, 4);
      if (n > kMaxStoreValue) throw Error(Errc::corrupt, "a store reply exceeds its limit");
      return static_cast<std::size_t>(n);
    });
    return {static_cast<std::uint8_t>(reply[0]),
            std::string(reinterpret_cast<const char*>(reply.data() + 5), reply.size() - 5)};
  }

  std::string url_;
  std::shared_ptr<Server> server_;  // rank 0's process: the store lives as long as its users
  std::mutex mutex_;                // one request at a time on the connection
  tcp::Socket socket_;
  std::unique_ptr<Channel> channel_;
};

}  // namespace

std::unique_ptr<Store> make_tcp_store(const RendezvousUrl& url, bool host, const std::string& token,
                                      std::chrono::milliseconds timeout) {
  std::shared_ptr<Server> server;
  if (host) server = server_for(static_cast<std::uint16_t>(url.port), token);
  return std::make_unique<TcpStore>(url, std::move(server), token, timeout);
}

}  // namespace nubo::parallel
