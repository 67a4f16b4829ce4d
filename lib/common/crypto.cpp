#include "common/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <cstring>
#include <memory>

#include "nubo/error.hpp"

namespace nubo::crypto {

Mac hmac_sha256(const std::string& key, std::initializer_list<std::span<const std::byte>> parts) {
  const auto fail = [] { throw Error(Errc::internal, "HMAC-SHA256 failed in libcrypto"); };
  std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr),
                                                        &EVP_MAC_free);
  if (!mac) fail();
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(EVP_MAC_CTX_new(mac.get()),
                                                                &EVP_MAC_CTX_free);
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                               OSSL_PARAM_construct_end()};
  if (!ctx || !EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(key.data()),
                            key.size(), params))
    fail();
  for (auto part : parts)
    if (!EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(part.data()),
                        part.size()))
      fail();
  Mac out{};
  std::size_t len = 0;
  if (!EVP_MAC_final(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len, out.size()) ||
      len != out.size())
    fail();
  return out;
}

Mac hmac_sha256(const std::string& key, std::span<const std::byte> data) {
  return hmac_sha256(key, {data});
}

void random_bytes(std::span<std::byte> out) {
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size())) != 1)
    throw Error(Errc::unavailable, "no random bytes from libcrypto (RAND_bytes failed)");
}

bool same_mac(const Mac& a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

namespace {

using Ctx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;
const unsigned char* u8(const std::byte* p) {
  return reinterpret_cast<const unsigned char*>(p);
}
unsigned char* u8(std::byte* p) {
  return reinterpret_cast<unsigned char*>(p);
}

// A context keyed for AES-256-GCM in the direction asked, with the AAD fed.
Ctx gcm(bool encrypt, const AesKey& key, const GcmNonce& nonce, std::span<const std::byte> aad) {
  Ctx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int n = 0;
  if (!ctx ||
      EVP_CipherInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, u8(key.data()), u8(nonce.data()),
                        encrypt ? 1 : 0) != 1 ||
      (!aad.empty() &&
       EVP_CipherUpdate(ctx.get(), nullptr, &n, u8(aad.data()), static_cast<int>(aad.size())) != 1))
    throw Error(Errc::internal, "AES-256-GCM is not available from libcrypto");
  return ctx;
}

}  // namespace

void aes256_gcm_seal(const AesKey& key, const GcmNonce& nonce, std::span<const std::byte> aad,
                     std::span<const std::byte> plain, std::span<std::byte> out) {
  if (out.size() != plain.size() + kGcmTagSize)
    throw Error(Errc::internal, "aes256_gcm_seal: output of the wrong size");
  auto ctx = gcm(true, key, nonce, aad);
  int n = 0, tail = 0;
  if ((!plain.empty() && EVP_EncryptUpdate(ctx.get(), u8(out.data()), &n, u8(plain.data()),
                                           static_cast<int>(plain.size())) != 1) ||
      EVP_EncryptFinal_ex(ctx.get(), u8(out.data()) + n, &tail) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kGcmTagSize,
                          u8(out.data() + plain.size())) != 1)
    throw Error(Errc::internal, "AES-256-GCM encryption failed in libcrypto");
}

bool aes256_gcm_open(const AesKey& key, const GcmNonce& nonce, std::span<const std::byte> aad,
                     std::span<const std::byte> sealed, std::span<std::byte> out) {
  if (sealed.size() < kGcmTagSize || out.size() != sealed.size() - kGcmTagSize) return false;
  auto ctx = gcm(false, key, nonce, aad);
  unsigned char tag[kGcmTagSize];
  std::memcpy(tag, sealed.data() + out.size(), kGcmTagSize);
  int n = 0, tail = 0;
  if (!out.empty() && EVP_DecryptUpdate(ctx.get(), u8(out.data()), &n, u8(sealed.data()),
                                        static_cast<int>(out.size())) != 1)
    return false;
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kGcmTagSize, tag) != 1) return false;
  return EVP_DecryptFinal_ex(ctx.get(), u8(out.data()) + n, &tail) == 1;
}

}  // namespace nubo::crypto
