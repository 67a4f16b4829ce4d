// What a hostile or broken peer cannot do: connect without the token, replay a handshake, write
// outside DEST, make the server allocate or wait without bound, or stop it serving others.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

#include "net_helpers.hpp"
#include "transfer/net/wire.hpp"

namespace net = nubo::net;
namespace tn = nubo::transfer::net;
using nubo_test::TempDir;

namespace {

bool refused_with(const std::function<void()>& f, nubo::Errc code) {
  try {
    f();
  } catch (const nubo::Error& e) {
    return e.code() == code;
  }
  return false;
}

// A connection the server closed reads as end of stream (or an error message, then the end).
bool closed_by_server(tn::Socket& s) {
  try {
    for (int i = 0; i < 4; ++i) {
      auto m = s.read_message(tn::kMaxControl);
      if (m.type == tn::MsgType::error) continue;
    }
  } catch (const nubo::Error& e) {
    return e.code() == nubo::Errc::unavailable;
  }
  return false;
}

// The server's answer: its error text, "accepted" for any other message, or why the connection
// closed.
std::string reply_of(tn::Socket& s) {
  try {
    auto m = s.read_message(tn::kMaxControl);
    if (m.type == tn::MsgType::error) return tn::decode_error(m.payload).text;
    return "accepted";
  } catch (const nubo::Error& e) {
    return std::string("closed: ") + e.what();
  }
}

// Authenticates a control stream by hand, then sends a manifest of `entries`.
std::string send_manifest(const net::Server& server,
                          const std::vector<nubo::transfer::format::EntryMeta>& entries,
                          const std::string& subdir = "") {
  auto s = nubo_test::raw_connect(server);
  tn::client_handshake(s, nubo_test::kToken, tn::Role::control, {});
  try {
    s.write_message(tn::MsgType::begin, tn::encode_begin({4096, entries.size(), subdir}));
    for (const auto& b : tn::encode_entries(entries)) s.write_message(tn::MsgType::entries, b);
    s.write_message(tn::MsgType::entries_end, {});
  } catch (const nubo::Error&) {
    // The server may refuse `begin` and close before the rest is written (EPIPE here); its
    // error message is still waiting to be read.
  }
  return reply_of(s);
}

nubo::transfer::format::EntryMeta file_entry(const std::string& path) {
  nubo::transfer::format::EntryMeta e;
  e.path = path;
  e.size = 10;
  return e;
}

// A send by hand: the manifest on a control stream, then whatever a test writes on a data stream.
struct HandSend {
  tn::Socket control, data;
  HandSend(const net::Server& server, const std::vector<nubo::transfer::format::EntryMeta>& entries,
           const std::string& subdir = "")
      : control(nubo_test::raw_connect(server)), data(nubo_test::raw_connect(server)) {
    auto session = tn::client_handshake(control, nubo_test::kToken, tn::Role::control, {});
    control.write_message(tn::MsgType::begin, tn::encode_begin({4096, entries.size(), subdir}));
    for (const auto& b : tn::encode_entries(entries))
      control.write_message(tn::MsgType::entries, b);
    control.write_message(tn::MsgType::entries_end, {});
    while (control.read_message(tn::kMaxControl).type != tn::MsgType::status_end) {
    }
    tn::client_handshake(data, nubo_test::kToken, tn::Role::data, session);
  }
  // Writes one raw chunk (which the server answers only when it refuses it).
  void chunk(std::uint32_t entry, const std::string& raw) {
    tn::ChunkMeta c{entry,
                    0,
                    nubo::transfer::ChunkCodec::none,
                    0,
                    static_cast<std::uint32_t>(raw.size()),
                    nubo::transfer::hash64(nubo::transfer::as_bytes(raw)),
                    static_cast<std::uint32_t>(raw.size())};
    auto meta = tn::encode_chunk_meta(c);
    std::vector<std::byte> m(meta.begin(), meta.end());
    nubo::transfer::append(m, nubo::transfer::as_bytes(raw));
    data.write_message(tn::MsgType::chunk, m);
  }
  // Writes a bundle of `members` whose payload is `raw` stored as it is.
  void write_bundle(std::vector<tn::BundleMember> members, const std::string& raw,
                    std::uint64_t raw_hash) {
    tn::BundleMeta b;
    b.raw_size = static_cast<std::uint32_t>(raw.size());
    b.raw_hash = raw_hash;
    b.stored_size = b.raw_size;
    b.members = std::move(members);
    auto m = tn::encode_bundle_head(b);
    nubo::transfer::append(m, nubo::transfer::as_bytes(raw));
    data.write_message(tn::MsgType::bundle, m);
  }
  // Ends the data stream: the server's error text, or "accepted" when it processed everything.
  std::string end() {
    try {
      data.write_message(tn::MsgType::stream_end, tn::encode_u64(0));
    } catch (const nubo::Error&) {
      // The server may have refused a message and closed before stream_end is written (EPIPE);
      // its error message is still waiting to be read.
    }
    return reply_of(data);
  }
  std::string bundle(std::vector<tn::BundleMember> members, const std::string& raw,
                     std::uint64_t raw_hash) {
    try {
      write_bundle(std::move(members), raw, raw_hash);
    } catch (const nubo::Error&) {
    }
    return end();
  }
};

nubo::transfer::Hash128 content_hash(const std::string& s) {
  nubo::transfer::FileHasher h;
  h.update(nubo::transfer::as_bytes(s));
  return h.digest();
}

}  // namespace

TEST_CASE("bundles that lie about their members are refused, and nothing is written", "[net]") {
  TempDir t;
  net::Server server(nubo_test::serve_options(t / "dst"));
  auto a = file_entry("a"), b = file_entry("b"), d = file_entry("d");
  d.kind = nubo::transfer::format::EntryKind::directory;
  d.size = 0;
  std::vector<nubo::transfer::format::EntryMeta> manifest = {a, b, d};
  const std::string ten = "0123456789", twenty = ten + "abcdefghij";
  auto h10 = nubo::transfer::hash64(nubo::transfer::as_bytes(ten));
  auto h20 = nubo::transfer::hash64(nubo::transfer::as_bytes(twenty));
  auto ha = content_hash(ten);
  CHECK_THAT(HandSend(server, manifest).bundle({{2, ha}}, ten, h10),
             Catch::Contains("not a file of this send"));
  CHECK_THAT(HandSend(server, manifest).bundle({{0, ha}, {0, ha}}, twenty, h20),
             Catch::Contains("sent twice"));
  CHECK_THAT(HandSend(server, manifest).bundle({{0, ha}, {1, ha}}, ten, h10),
             Catch::Contains("members hold 20 bytes, its header says 10"));
  CHECK_THAT(HandSend(server, manifest).bundle({{0, ha}}, ten, h10 + 1),
             Catch::Contains("checksum mismatch"));
  CHECK_THAT(HandSend(server, manifest).bundle({{0, ha}, {1, ha}}, twenty, h20),
             Catch::Contains("'b': content hash mismatch"));
  {
    HandSend both(server, {file_entry("c")});
    both.chunk(0, ten);
    CHECK_THAT(both.bundle({{0, ha}}, ten, h10), Catch::Contains("also being sent in chunks"));
  }
  for (const char* name : {"a", "b", "c", ".a.nubo-part", ".b.nubo-part"})
    CHECK(::access((t / "dst/" + name).c_str(), F_OK) != 0);
  // The same server takes an honest bundle, and an honest send.
  CHECK(
      HandSend(server, manifest).bundle({{0, ha}, {1, content_hash("abcdefghij")}}, twenty, h20) ==
      "accepted");
  CHECK(nubo_test::read_file(t / "dst/b") == "abcdefghij");
  nubo_test::write_file(t / "src/a", "still serving");
  net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  CHECK(nubo_test::read_file(t / "dst/src/a") == "still serving");
}

TEST_CASE("bundle members copied from a source are checked like any other", "[net]") {
  TempDir t;
  net::Server server(nubo_test::serve_options(t / "dst", 1.0));  // a missing source: 1 s
  auto d = file_entry("d");
  d.kind = nubo::transfer::format::EntryKind::directory;
  d.size = 0;
  auto big = file_entry("big");
  big.size = 20;
  std::vector<nubo::transfer::format::EntryMeta> manifest = {d, file_entry("a"), file_entry("b"),
                                                             big, file_entry("c")};
  const std::string ten = "0123456789";
  auto h10 = nubo::transfer::hash64(nubo::transfer::as_bytes(ten));
  auto ha = content_hash(ten), other = content_hash("abcdefghij");
  auto empty = nubo::transfer::hash64({});
  CHECK_THAT(HandSend(server, manifest).bundle({{1, ha, 0}}, "", empty),
             Catch::Contains("not a file of this send"));
  CHECK_THAT(HandSend(server, manifest).bundle({{4, ha, 3}}, "", empty),
             Catch::Contains("has another size"));
  CHECK_THAT(HandSend(server, manifest).bundle({{2, ha, 1}, {4, ha, 2}}, "", empty),
             Catch::Contains("its source is a member without content"));
  CHECK_THAT(HandSend(server, manifest).bundle({{1, ha}, {2, other, 1}}, ten, h10),
             Catch::Contains("'b': content hash mismatch with its source"));
  for (const char* name : {"a", "b", "c"}) CHECK(::access((t / "dst/" + name).c_str(), F_OK) != 0);
  // A source that never comes: refused after the server's timeout ("never arrived", or the
  // send's control stream given up first, idle as long, which ends the send), the server
  // unharmed.
  auto never = HandSend(server, manifest, "never").bundle({{4, ha, 1}}, "", empty);
  INFO(never);
  CHECK((never.find("never arrived") != std::string::npos ||
         never.find("the send ended") != std::string::npos || never.starts_with("closed")));
  CHECK(::access((t / "dst/never/c").c_str(), F_OK) != 0);
  // Honest copies: from a member of the same bundle, and from a file an earlier bundle (here
  // the one before on the same stream) put in place.
  {
    HandSend s(server, manifest, "ok");
    s.write_bundle({{1, ha}, {2, ha, 1}}, ten, h10);
    s.write_bundle({{4, ha, 1}}, "", empty);
    CHECK(s.end() == "accepted");
  }
  for (const char* name : {"a", "b", "c"}) CHECK(nubo_test::read_file(t / "dst/ok/" + name) == ten);
}

TEST_CASE("a wrong token, no token and a replayed handshake are refused", "[net]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", "hello");
  net::Server server(nubo_test::serve_options(t / "dst"));
  auto o = nubo_test::send_options();
  o.token = "not-the-token-at-all";
  CHECK(refused_with([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); },
                     nubo::Errc::invalid_argument));
  o.token = "";
  ::unsetenv("NUBO_TOKEN");
  CHECK(refused_with([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); },
                     nubo::Errc::invalid_argument));
  // A client that skips authentication and talks protocol straight away.
  {
    auto s = nubo_test::raw_connect(server);
    s.write_message(tn::MsgType::begin, tn::encode_begin({4096, 0, ""}));
    CHECK(closed_by_server(s));
  }
  // Replay: record a good client's hello and auth, play them on a new connection.
  std::vector<std::byte> hello, auth;
  {
    auto s = nubo_test::raw_connect(server);
    tn::Hello h;
    tn::random_bytes(h.nonce);
    hello = tn::encode_hello(h);
    s.write_message(tn::MsgType::hello, hello);
    auto c = tn::decode_challenge(s.read_message(tn::kMaxControl).payload);
    auto proof = tn::client_proof(nubo_test::kToken, hello, c.nonce);
    auth.assign(proof.begin(), proof.end());
    s.write_message(tn::MsgType::auth, auth);
    CHECK(s.read_message(tn::kMaxControl).type == tn::MsgType::welcome);
  }
  {
    auto s = nubo_test::raw_connect(server);
    s.write_message(tn::MsgType::hello, hello);
    CHECK(s.read_message(tn::kMaxControl).type == tn::MsgType::challenge);
    s.write_message(tn::MsgType::auth, auth);
    auto m = s.read_message(tn::kMaxControl);
    CHECK(m.type == tn::MsgType::error);
    CHECK(closed_by_server(s));
  }
  CHECK(server.stats().refused >= 3);
  // And the server still serves.
  net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  CHECK(nubo_test::read_file(t / "dst/src/a") == "hello");
}

TEST_CASE("writes outside DEST are refused", "[net]") {
  TempDir t;
  nubo_test::make_dirs(t / "dst");
  nubo_test::make_dirs(t / "outside");
  REQUIRE(::symlink((t / "outside").c_str(), (t / "dst/escape").c_str()) == 0);
  net::Server server(nubo_test::serve_options(t / "dst"));
  CHECK(send_manifest(server, {file_entry("../x")}).find("'..'") != std::string::npos);
  CHECK(send_manifest(server, {file_entry("/etc/x")}).find("absolute") != std::string::npos);
  CHECK(send_manifest(server, {file_entry("a/../../x")}).find("'..'") != std::string::npos);
  auto link = file_entry("l");
  link.kind = nubo::transfer::format::EntryKind::symlink;
  link.size = 0;
  link.link_target = "../../outside";
  CHECK(send_manifest(server, {link}).find("climbs out") != std::string::npos);
  link.link_target = "/etc";
  CHECK(send_manifest(server, {link}).find("absolute") != std::string::npos);
  // Through a link already in DEST, as an entry or as the subdirectory.
  CHECK(send_manifest(server, {file_entry("escape/x")}) != "accepted");
  CHECK(send_manifest(server, {file_entry("x")}, "escape") != "accepted");
  CHECK(send_manifest(server, {file_entry("x")}, "../up") != "accepted");
  // An actual send into a linked subdirectory fails too, and nothing lands outside.
  nubo_test::write_file(t / "src/a", "data");
  CHECK_THROWS(
      net::send({t / "src"}, nubo_test::dest_of(server, "escape"), nubo_test::send_options()));
  CHECK(nubo_test::tree(t / "outside").empty());
}

TEST_CASE("a huge length or garbage disconnects that peer only", "[net]") {
  TempDir t;
  net::Server server(nubo_test::serve_options(t / "dst"));
  {
    auto s = nubo_test::raw_connect(server);
    auto h = tn::encode_frame_header(tn::MsgType::hello, 0xfffffff0u);
    s.write_all(h);
    CHECK(closed_by_server(s));
  }
  {
    auto s = nubo_test::raw_connect(server);
    std::string junk = nubo_test::random_bytes(4096, 5);
    try {
      s.write_all(nubo::transfer::as_bytes(junk));
    } catch (const nubo::Error&) {
    }
    CHECK(closed_by_server(s));
  }
  {  // authenticated, then a chunk message claiming 4 GB
    auto s = nubo_test::raw_connect(server);
    tn::client_handshake(s, nubo_test::kToken, tn::Role::control, {});
    s.write_all(tn::encode_frame_header(tn::MsgType::entries, 0xffffffffu));
    CHECK(closed_by_server(s));
  }
  nubo_test::write_file(t / "src/a", "still serving");
  net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  CHECK(nubo_test::read_file(t / "dst/src/a") == "still serving");
}

TEST_CASE("a stalled peer times out while another client completes", "[net]") {
  TempDir t;
  net::Server server(nubo_test::serve_options(t / "dst", 1.0));
  auto slow = nubo_test::raw_connect(server, 20);
  auto hello = tn::encode_hello({});
  auto frame = tn::frame(tn::MsgType::hello, hello);
  slow.write_all({frame.data(), 10});  // half a hello, then silence
  nubo_test::write_file(t / "src/a", nubo_test::text_bytes(1 << 20, 7));
  net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  CHECK(nubo_test::same_tree(t / "src", t / "dst/src"));
  CHECK(closed_by_server(slow));  // the server gave up on it (after ~1 s, bounded by 20 s here)
}
