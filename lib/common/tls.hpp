// TLS 1.3 for nubo's TCP connections (OpenSSL libssl), in two modes:
//  - a pre-shared key derived from the job's token (HKDF-SHA256 with a label of nubo's): no
//    certificates to manage, and the token never crosses the wire. The handshake still runs an
//    ephemeral (EC)DHE exchange (psk_dhe_ke), so a token stolen later decrypts nothing recorded.
//  - X.509: the server presents a certificate (cert and key files), the client checks it against
//    a CA file and the server's name (hostname verification).
// Only AES-GCM and ChaCha20-Poly1305 suites are offered, only TLS 1.3 is accepted. Every record
// is authenticated: a byte changed, removed, reordered or replayed on the path ends the
// connection with an error instead of reaching the application.
#pragma once

#include <memory>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;
typedef struct bio_st BIO;

namespace nubo::tls {

struct Options {
  std::string token;        // the shared secret the PSK is derived from; empty: no PSK
  std::string cert_file;    // server: its certificate chain (PEM)
  std::string key_file;     // server: its private key (PEM)
  std::string ca_file;      // client: the CA that signed the server's certificate (PEM)
  std::string server_name;  // client: the name the certificate must carry (default: the host)
};

// An SSL_CTX set up for one side. Error(invalid_argument) naming the file and OpenSSL's reason
// when a certificate, key or CA cannot be used; a client needs a token or a CA, a server a token
// or a certificate.
class Context {
 public:
  static std::shared_ptr<Context> client(const Options& options);
  static std::shared_ptr<Context> server(const Options& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  SSL_CTX* get() const { return ctx_; }
  bool server_side() const { return server_; }
  const Options& options() const { return options_; }
  // The 32-byte PSK (empty without a token).
  const std::string& psk() const { return psk_; }

 private:
  Context(const Options& options, bool server);
  void configure(const Options& options, bool server);
  SSL_CTX* ctx_ = nullptr;
  bool server_ = false;
  Options options_;
  std::string psk_;
};

// A BIO over a connected socket `fd` (not owned) that never raises SIGPIPE: writes use
// send(MSG_NOSIGNAL), as nubo's clear-text path does, so a peer that vanishes is an error
// rather than the end of the process. With `hold_reads`, it reads nothing (TLS sees "not yet")
// until release_reads: a client looks at the server's first byte itself before TLS consumes it,
// since a server that refuses before any handshake answers in the clear.
BIO* socket_bio(int fd, bool hold_reads = false);
void release_reads(BIO* bio);

// What a failed TLS call means, from the first queued OpenSSL error.
enum class Failure {
  closed,     // the peer closed without TLS's close_notify (our framing detects truncation)
  wrong_key,  // a PSK handshake failed: the two sides derived different keys (other tokens)
  other,      // a record failed authentication, a certificate did not verify, ...
};
Failure classify(unsigned long error, bool psk);

// OpenSSL's queued errors as text ("...; ..."), emptying the queue; `fallback` when none.
std::string last_error(const std::string& fallback);

// The first byte of a TLS handshake record: how a server tells a TLS client from one that
// speaks the protocol in the clear.
constexpr unsigned char kHandshakeRecord = 0x16;

}  // namespace nubo::tls
