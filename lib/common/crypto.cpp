#include "common/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "nubo/error.hpp"

namespace nubo::crypto {

Mac hmac_sha256(const std::string& key, std::span<const std::byte> data) {
  Mac out{};
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(),
            reinterpret_cast<unsigned char*>(out.data()), &len) ||
      len != out.size())
    throw Error(Errc::internal, "HMAC-SHA256 failed in libcrypto");
  return out;
}

void random_bytes(std::span<std::byte> out) {
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size())) != 1)
    throw Error(Errc::unavailable, "no random bytes from libcrypto (RAND_bytes failed)");
}

bool same_mac(const Mac& a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace nubo::crypto
