#include "common/tls.hpp"

#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "common/small_file.hpp"
#include "nubo/error.hpp"

namespace nubo::tls {
namespace {

// The suites offered, strongest first; all are AEADs. The PSK is bound to SHA-256 (a server
// ignores a PSK whose hash differs from the suite's), so a client using the token offers only
// the two SHA-256 suites.
constexpr const char* kSuites =
    "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";
constexpr const char* kPskSuites = "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256";
constexpr const char* kPskIdentity = "nubo-net-1";
constexpr unsigned char kPskLabel[] = "nubo-net-1 tls13 psk from the shared token";
// TLS_AES_128_GCM_SHA256: the suite the PSK session is made for (its hash is SHA-256).
constexpr unsigned char kPskSuite[] = {0x13, 0x01};

// PEM files (certificates, keys, CAs) are read through files::read_small_file, bounded and
// only when regular, then handed to OpenSSL from memory: its own file readers would wait on a
// FIFO and read /dev/zero without end.
constexpr std::uint64_t kMaxPemFile = 1 << 20;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

Bio pem_of(const std::string& path, std::string_view what, std::string& bytes) {
  bytes = files::read_small_file(path, kMaxPemFile, what).bytes;
  Bio bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
  if (!bio) throw Error(Errc::out_of_memory, "TLS: BIO_new_mem_buf failed");
  return bio;
}

// Hands each certificate left in `bio` to `take`, which owns it; false when `take` refuses one,
// or when something other than the end of the file ends the reading.
template <class Take>
bool each_certificate(BIO* bio, Take take) {
  while (X509* c = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr))
    if (!take(c)) return false;
  const auto e = ERR_peek_last_error();
  if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) ERR_clear_error();
  return ERR_peek_error() == 0;
}

// The certificate and the chain after it, as SSL_CTX_use_certificate_chain_file reads them.
bool use_chain(SSL_CTX* ctx, const std::string& path) {
  std::string bytes;
  auto bio = pem_of(path, "certificate file", bytes);
  X509* leaf = PEM_read_bio_X509_AUX(bio.get(), nullptr, nullptr, nullptr);
  if (!leaf) return false;
  const bool used = SSL_CTX_use_certificate(ctx, leaf) == 1;
  X509_free(leaf);
  if (!used || SSL_CTX_clear_chain_certs(ctx) != 1) return false;
  return each_certificate(bio.get(), [&](X509* ca) {
    if (SSL_CTX_add0_chain_cert(ctx, ca) == 1) return true;  // the chain owns it now
    X509_free(ca);
    return false;
  });
}

bool use_key(SSL_CTX* ctx, const std::string& path) {
  std::string bytes;
  auto bio = pem_of(path, "private key file", bytes);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (!key) return false;
  const bool used = SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  return used;
}

bool use_cas(SSL_CTX* ctx, const std::string& path) {
  std::string bytes;
  auto bio = pem_of(path, "CA file", bytes);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int added = 0;
  const bool read = each_certificate(bio.get(), [&](X509* ca) {
    const bool ok = X509_STORE_add_cert(store, ca) == 1;  // the store takes a reference
    X509_free(ca);
    added += ok;
    return ok;
  });
  return read && added > 0;
}

std::string derive_psk(const std::string& token) {
  std::string key(32, '\0');
  EVP_PKEY_CTX* kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  std::size_t len = key.size();
  const bool ok =
      kctx && EVP_PKEY_derive_init(kctx) > 0 && EVP_PKEY_CTX_set_hkdf_md(kctx, EVP_sha256()) > 0 &&
      EVP_PKEY_CTX_set1_hkdf_salt(kctx, kPskLabel, sizeof kPskLabel - 1) > 0 &&
      EVP_PKEY_CTX_set1_hkdf_key(kctx, reinterpret_cast<const unsigned char*>(token.data()),
                                 static_cast<int>(token.size())) > 0 &&
      EVP_PKEY_derive(kctx, reinterpret_cast<unsigned char*>(key.data()), &len) > 0 &&
      len == key.size();
  EVP_PKEY_CTX_free(kctx);
  if (!ok) throw Error(Errc::internal, "deriving the TLS key: " + last_error("HKDF failed"));
  return key;
}

const Context* context_of(SSL* ssl) {
  return static_cast<const Context*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
}

// A session holding the PSK, as OpenSSL's TLS 1.3 PSK callbacks want it.
SSL_SESSION* psk_session(SSL* ssl, const std::string& key) {
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, kPskSuite);
  SSL_SESSION* session = SSL_SESSION_new();
  if (!cipher || !session ||
      !SSL_SESSION_set1_master_key(session, reinterpret_cast<const unsigned char*>(key.data()),
                                   key.size()) ||
      !SSL_SESSION_set_cipher(session, cipher) ||
      !SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION)) {
    SSL_SESSION_free(session);
    return nullptr;
  }
  return session;
}

int use_psk(SSL* ssl, const EVP_MD* md, const unsigned char** id, std::size_t* idlen,
            SSL_SESSION** sess) {
  const Context* c = context_of(ssl);
  *sess = nullptr;
  // No PSK, or a CA to check the server against: the server proves itself by certificate.
  if (!c || c->psk().empty() || !c->options().ca_file.empty()) return 1;
  if (md && md != EVP_sha256()) return 1;
  *sess = psk_session(ssl, c->psk());
  if (!*sess) return 0;
  *id = reinterpret_cast<const unsigned char*>(kPskIdentity);
  *idlen = std::strlen(kPskIdentity);
  return 1;
}

int find_psk(SSL* ssl, const unsigned char* id, std::size_t idlen, SSL_SESSION** sess) {
  const Context* c = context_of(ssl);
  *sess = nullptr;
  if (!c || c->psk().empty() || idlen != std::strlen(kPskIdentity) ||
      std::memcmp(id, kPskIdentity, idlen) != 0)
    return 1;  // not ours: the handshake goes on without a PSK (and fails without a cert)
  *sess = psk_session(ssl, c->psk());
  return *sess ? 1 : 0;
}

// What a socket BIO holds: its descriptor, and whether reads wait for release_reads.
struct SocketBio {
  int fd;
  bool hold_reads;
};

int fd_of(BIO* b) {
  return static_cast<SocketBio*>(BIO_get_data(b))->fd;
}

bool transient(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == EINPROGRESS;
}

int bio_write(BIO* b, const char* data, int size) {
  BIO_clear_retry_flags(b);
  const auto n = ::send(fd_of(b), data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && transient(errno)) BIO_set_retry_write(b);
  return static_cast<int>(n);
}

int bio_read(BIO* b, char* out, int size) {
  BIO_clear_retry_flags(b);
  if (static_cast<SocketBio*>(BIO_get_data(b))->hold_reads) {
    BIO_set_retry_read(b);
    return -1;
  }
  const auto n = ::recv(fd_of(b), out, static_cast<std::size_t>(size), 0);
  if (n < 0 && transient(errno)) BIO_set_retry_read(b);
  return static_cast<int>(n);
}

long bio_ctrl(BIO* b, int cmd, long, void* ptr) {
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;  // nothing is buffered here
    case BIO_C_GET_FD:
      if (ptr) *static_cast<int*>(ptr) = fd_of(b);
      return fd_of(b);
    default:
      return 0;
  }
}

int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

int bio_destroy(BIO* b) {
  delete static_cast<SocketBio*>(BIO_get_data(b));
  BIO_set_data(b, nullptr);
  return 1;
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "nubo socket");
    if (m) {
      BIO_meth_set_write(m, bio_write);
      BIO_meth_set_read(m, bio_read);
      BIO_meth_set_ctrl(m, bio_ctrl);
      BIO_meth_set_create(m, bio_create);
      BIO_meth_set_destroy(m, bio_destroy);
    }
    return m;
  }();
  return method;
}

}  // namespace

BIO* socket_bio(int fd, bool hold_reads) {
  const BIO_METHOD* m = socket_method();
  BIO* b = m ? BIO_new(m) : nullptr;
  if (!b) throw Error(Errc::internal, "TLS: " + last_error("BIO_new failed"));
  BIO_set_data(b, new SocketBio{fd, hold_reads});
  return b;
}

void release_reads(BIO* bio) {
  static_cast<SocketBio*>(BIO_get_data(bio))->hold_reads = false;
}

Failure classify(unsigned long error, bool psk) {
  if (ERR_GET_LIB(error) != ERR_LIB_SSL) return Failure::other;
  switch (ERR_GET_REASON(error)) {
    case SSL_R_UNEXPECTED_EOF_WHILE_READING:
      return Failure::closed;
    // The server's view of a client with another token, and the alerts a client gets for it
    // (OpenSSL answers a binder that does not verify with illegal_parameter or decrypt_error).
    case SSL_R_BINDER_DOES_NOT_VERIFY:
    case SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
      return psk ? Failure::wrong_key : Failure::other;
    default:
      return Failure::other;
  }
}

std::string last_error(const std::string& fallback) {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? fallback : out;
}

Context::Context(const Options& options, bool server) : server_(server), options_(options) {
  // A constructor that throws runs no destructor: the context is freed here then.
  try {
    configure(options, server);
  } catch (...) {
    SSL_CTX_free(ctx_);
    ctx_ = nullptr;
    throw;
  }
}

void Context::configure(const Options& options, bool server) {
  ERR_clear_error();
  ctx_ = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (!ctx_) throw Error(Errc::internal, "TLS: " + last_error("SSL_CTX_new failed"));
  SSL_CTX_set_app_data(ctx_, this);
  SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx_, TLS1_3_VERSION);
  SSL_CTX_set_ciphersuites(ctx_, kSuites);
  // Read ahead: one recv fills OpenSSL's buffer with as many records as have arrived, instead of
  // two system calls (header, then body) per 16 KiB record.
  SSL_CTX_set_read_ahead(ctx_, 1);
  SSL_CTX_set_default_read_buffer_len(ctx_, 256 << 10);
  // No session tickets: every connection is a full handshake with a fresh key exchange.
  SSL_CTX_set_options(ctx_, SSL_OP_NO_TICKET);
  SSL_CTX_set_num_tickets(ctx_, 0);
  if (!options.token.empty()) psk_ = derive_psk(options.token);
  auto bad_file = [&](const std::string& what, const std::string& file) {
    return Error(Errc::invalid_argument,
                 "TLS: cannot use " + what + " " + file + ": " + last_error("unreadable"));
  };
  if (server) {
    if (!options.cert_file.empty() || !options.key_file.empty()) {
      if (options.cert_file.empty() || options.key_file.empty())
        throw Error(Errc::invalid_argument, "TLS: a certificate needs both --cert and --key");
      if (!use_chain(ctx_, options.cert_file)) throw bad_file("the certificate", options.cert_file);
      if (!use_key(ctx_, options.key_file)) throw bad_file("the private key", options.key_file);
      if (SSL_CTX_check_private_key(ctx_) != 1)
        throw bad_file("the private key (it does not match the certificate)", options.key_file);
    } else if (psk_.empty()) {
      throw Error(Errc::invalid_argument, "TLS: a server needs a token or a certificate");
    }
    SSL_CTX_set_psk_find_session_callback(ctx_, find_psk);
  } else {
    if (!options.ca_file.empty()) {
      if (!use_cas(ctx_, options.ca_file)) throw bad_file("the CA file", options.ca_file);
      SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    } else if (psk_.empty()) {
      throw Error(Errc::invalid_argument, "TLS: a client needs a token or a CA file");
    } else {
      SSL_CTX_set_ciphersuites(ctx_, kPskSuites);
    }
    SSL_CTX_set_psk_use_session_callback(ctx_, use_psk);
  }
}

Context::~Context() {
  SSL_CTX_free(ctx_);
}

std::shared_ptr<Context> Context::client(const Options& options) {
  return std::shared_ptr<Context>(new Context(options, false));
}

std::shared_ptr<Context> Context::server(const Options& options) {
  return std::shared_ptr<Context>(new Context(options, true));
}

}  // namespace nubo::tls
