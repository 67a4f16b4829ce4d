#include "transfer/store/md5.hpp"

#include <openssl/evp.h>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::store {

Md5 md5_of(transfer::Bytes data) {
  Md5 d{};
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), d.data(), &n, EVP_md5(), nullptr);
  return d;
}

std::string md5_hex(const Md5& d) {
  return text::hex(d.data(), d.size());
}

std::string md5_base64(const Md5& d) {
  return text::base64(d.data(), d.size());
}

struct Md5Stream::State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

Md5Stream::Md5Stream() : state_(std::make_unique<State>()) {
  if (!state_->ctx || EVP_DigestInit_ex(state_->ctx, EVP_md5(), nullptr) != 1)
    throw Error(Errc::internal, "OpenSSL could not start an MD5");
}

Md5Stream::~Md5Stream() = default;

void Md5Stream::update(transfer::Bytes data) {
  EVP_DigestUpdate(state_->ctx, data.data(), data.size());
}

Md5 Md5Stream::digest() const {
  // A copy of the context, so that the stream could go on.
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> copy(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  Md5 d{};
  unsigned int n = 0;
  if (!copy || EVP_MD_CTX_copy_ex(copy.get(), state_->ctx) != 1 ||
      EVP_DigestFinal_ex(copy.get(), d.data(), &n) != 1)
    throw Error(Errc::internal, "OpenSSL could not finish an MD5");
  return d;
}

}  // namespace nubo::store
