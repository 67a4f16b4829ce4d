// TLS on the wire (docs/net.md, "Encryption"): what an on-path attacker sees and what altering
// the stream does, the opt-out and the server that refuses it, certificates checked against a
// CA and a name, and a token that does not match.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <thread>

#include "error_of.hpp"
#include "net_helpers.hpp"
#include "proxy.hpp"

namespace net = nubo::net;
namespace xfer = nubo::transfer;
using nubo_test::contains;
using nubo_test::error_of;
using nubo_test::Proxy;
using nubo_test::TempDir;

namespace {

// A file whose content would show in a capture of the clear wire: stored uncompressed, with a
// marker that occurs nowhere else.
const std::string kMarker = "nubo-plaintext-marker-7f3a91c2";

void make_marked_tree(const TempDir& t) {
  std::string content;
  while (content.size() < (512 << 10)) content += kMarker + nubo_test::random_bytes(100, 9);
  nubo_test::write_file(t / "src/marked.bin", content);
}

net::SendOptions plain_chunks(net::SendOptions o) {
  o.codec = xfer::Codec::none;
  o.chunk_size = 64 << 10;
  return o;
}

// A CA, and a certificate it signed for `name` (also valid for 127.0.0.1), made with the
// openssl command.
struct Pki {
  std::string ca, cert, key;
  Pki(const TempDir& t, const std::string& dir, const std::string& name) {
    const std::string d = t / dir;
    nubo_test::make_dirs(d);
    ca = d + "/ca.pem";
    cert = d + "/cert.pem";
    key = d + "/key.pem";
    const std::string q = " >/dev/null 2>&1";
    const std::string cmds[] = {
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "
        "/CN=test-ca -keyout " +
            d + "/ca.key -out " + ca + q,
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=" + name +
            " -keyout " + key + " -out " + d + "/req.csr" + q,
        "printf 'subjectAltName=DNS:" + name + ",IP:127.0.0.1\\n' > " + d + "/ext.cnf",
        "openssl x509 -req -in " + d + "/req.csr -CA " + ca + " -CAkey " + d +
            "/ca.key -CAcreateserial -days 2 -extfile " + d + "/ext.cnf -out " + cert + q,
    };
    for (const auto& c : cmds) REQUIRE(std::system(c.c_str()) == 0);
  }
};

}  // namespace

TEST_CASE("an on-path capture holds none of the content, unless encryption is turned off",
          "[net][tls]") {
  TempDir t;
  make_marked_tree(t);
  net::Server server(nubo_test::serve_options(t / "dst"));
  {
    Proxy proxy(server.port(), {});
    net::send({t / "src"}, proxy.address() + "/tls", plain_chunks(nubo_test::send_options()));
    CHECK(nubo_test::same_tree(t / "src", t / "dst/tls/src"));
    auto wire = proxy.captured();
    CHECK(wire.size() > (512 << 10));
    CHECK(!contains(wire, kMarker));
    CHECK(!contains(wire, "marked.bin"));  // names are private too
  }
  {
    // The control: the same capture in the clear shows both, so the check above can fail.
    Proxy proxy(server.port(), {});
    auto o = plain_chunks(nubo_test::send_options());
    o.encrypt = false;
    net::send({t / "src"}, proxy.address() + "/clear", o);
    CHECK(nubo_test::same_tree(t / "src", t / "dst/clear/src"));
    auto wire = proxy.captured();
    CHECK(contains(wire, kMarker));
    CHECK(contains(wire, "marked.bin"));
  }
}

TEST_CASE("a byte altered or a stream cut on the path lands nothing, and a rerun completes",
          "[net][tls]") {
  TempDir t;
  make_marked_tree(t);
  net::Server server(nubo_test::serve_options(t / "dst"));
  auto o = plain_chunks(nubo_test::send_options(1));
  for (std::int64_t offset : {std::int64_t{300}, std::int64_t{3000}, std::int64_t{200000}}) {
    INFO("byte " << offset << " flipped");
    Proxy proxy(server.port(), {.flip_at = offset});
    nubo::Errc code{};
    auto why = error_of([&] { net::send({t / "src"}, proxy.address(), o); }, &code);
    CHECK(why != "no error");
    CHECK((code == nubo::Errc::unavailable || code == nubo::Errc::invalid_argument));
    // Nothing altered was renamed into place.
    struct stat st {};
    CHECK(::stat((t / "dst/src/marked.bin").c_str(), &st) != 0);
  }
  {
    Proxy proxy(server.port(), {.cut_after = 300000});
    CHECK(error_of([&] { net::send({t / "src"}, proxy.address(), o); }) != "no error");
  }
  auto s = net::send({t / "src"}, nubo_test::dest_of(server), o);
  CHECK(nubo_test::same_tree(t / "src", t / "dst/src"));
  CHECK(s.files == 1);
}

TEST_CASE("a byte altered in the TLS handshake is never taken for another token", "[net][tls]") {
  TempDir t;
  make_marked_tree(t);
  net::Server server(nubo_test::serve_options(t / "dst"));
  auto o = plain_chunks(nubo_test::send_options(1));
  // Offsets in the first ClientHello (a PSK one is about 250 bytes). Another token fails the
  // same check twice; a flipped byte only once: the sender tries once more, and either the
  // send completes or it fails as something to run again (exit 5), never as "fix the token".
  for (std::int64_t offset : {std::int64_t{20}, std::int64_t{60}, std::int64_t{120},
                              std::int64_t{180}, std::int64_t{230}}) {
    INFO("byte " << offset << " flipped");
    Proxy proxy(server.port(), {.flip_at = offset});
    nubo::Errc code{};
    auto why = error_of([&] { net::send({t / "src"}, proxy.address(), o); }, &code);
    INFO(why);
    CHECK(code != nubo::Errc::invalid_argument);
    CHECK(!contains(why, "token does not match"));
    if (why != "no error") CHECK(code == nubo::Errc::unavailable);
  }
}

TEST_CASE("a server that requires encryption refuses a sender in the clear, saying why",
          "[net][tls]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", "hello");
  auto so = nubo_test::serve_options(t / "dst");
  so.require_encryption = true;
  net::Server server(so);
  auto o = nubo_test::send_options();
  o.encrypt = false;
  auto why = error_of([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); });
  CHECK(contains(why, "only encrypted connections"));
  CHECK(server.stats().refused >= 1);
  net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  CHECK(nubo_test::read_file(t / "dst/src/a") == "hello");
}

TEST_CASE("a token that does not match fails the TLS handshake and says so", "[net][tls]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", "hello");
  net::Server server(nubo_test::serve_options(t / "dst"));
  auto o = nubo_test::send_options();
  o.token = "another-token-of-sufficient-length";
  nubo::Errc code{};
  auto why = error_of([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); }, &code);
  CHECK(code == nubo::Errc::invalid_argument);
  CHECK(contains(why, "token does not match"));
}

TEST_CASE("with certificates the client checks the CA and the server's name", "[net][tls]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", "hello");
  Pki pki(t, "pki", "receiver.test");
  Pki other(t, "other", "receiver.test");
  auto so = nubo_test::serve_options(t / "dst");
  so.cert_file = pki.cert;
  so.key_file = pki.key;
  net::Server server(so);
  auto o = nubo_test::send_options();
  o.ca_file = pki.ca;
  o.server_name = "receiver.test";
  net::send({t / "src"}, nubo_test::dest_of(server, "named"), o);
  CHECK(nubo_test::read_file(t / "dst/named/src/a") == "hello");
  o.server_name = "";  // the host, 127.0.0.1, is in the certificate too
  net::send({t / "src"}, nubo_test::dest_of(server, "by-ip"), o);
  CHECK(nubo_test::read_file(t / "dst/by-ip/src/a") == "hello");

  o.server_name = "impostor.test";
  CHECK(contains(error_of([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); }),
                 "does not verify"));
  o.server_name = "receiver.test";
  o.ca_file = other.ca;  // a certificate from a CA this client does not trust
  CHECK(contains(error_of([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); }),
                 "does not verify"));
  // A client with the token alone still gets in: the server keeps the token-derived key too.
  net::send({t / "src"}, nubo_test::dest_of(server, "psk"), nubo_test::send_options());
  CHECK(nubo_test::read_file(t / "dst/psk/src/a") == "hello");
}

TEST_CASE("unusable certificate options are refused before listening", "[net][tls]") {
  TempDir t;
  Pki pki(t, "pki", "receiver.test");
  auto so = nubo_test::serve_options(t / "dst");
  so.cert_file = pki.cert;
  CHECK(contains(error_of([&] { net::Server s(so); }), "both --cert and --key"));
  so.key_file = t / "missing.pem";
  CHECK(contains(error_of([&] { net::Server s(so); }), "missing.pem"));
  so.key_file = pki.ca;  // a certificate, not a key
  CHECK(contains(error_of([&] { net::Server s(so); }), "private key"));
  auto o = nubo_test::send_options();
  o.ca_file = t / "no-such-ca.pem";
  nubo_test::write_file(t / "src/a", "x");
  net::Server server(nubo_test::serve_options(t / "dst"));
  CHECK(contains(error_of([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); }),
                 "no-such-ca.pem"));
  // A device or a FIFO is refused at once: OpenSSL's own readers would read /dev/zero without
  // end, or wait on the FIFO for a writer.
  so.key_file = pki.key;
  so.cert_file = "/dev/zero";
  CHECK(contains(error_of([&] { net::Server s(so); }), "'/dev/zero' is a character device"));
  REQUIRE(::mkfifo((t / "fifo.pem").c_str(), 0600) == 0);
  o.ca_file = t / "fifo.pem";
  CHECK(contains(error_of([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); }),
                 "is a FIFO"));
}

TEST_CASE("a recorded session played back to the server is refused and writes nothing",
          "[net][tls]") {
  TempDir t;
  make_marked_tree(t);
  net::Server server(nubo_test::serve_options(t / "dst"));
  std::vector<std::string> recorded;
  {
    Proxy proxy(server.port(), {});
    net::send({t / "src"}, proxy.address() + "/first", plain_chunks(nubo_test::send_options(1)));
    recorded = proxy.connections();
  }
  REQUIRE(recorded.size() == 2);  // the control connection and one data stream
  // The server counts the send once its control connection has answered; wait for that.
  for (int i = 0; i < 200 && server.stats().sessions < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto refused = server.stats().refused;
  const auto sessions = server.stats().sessions;
  REQUIRE(sessions == 1);
  // Every connection played back as it was recorded, in order: the server's fresh handshake
  // values make the recorded Finished and records useless.
  std::vector<int> fds;
  for (const auto& bytes : recorded) {
    int fd = nubo_test::connect_from("127.0.0.1", server.port());
    ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  for (int i = 0; i < 100 && server.stats().refused < refused + 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int fd : fds) ::close(fd);
  CHECK(server.stats().refused >= refused + 2);
  CHECK(server.stats().sessions == sessions);
}
