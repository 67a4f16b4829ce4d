#include "transfer/store/md5.hpp"

#include <openssl/evp.h>

#include "common/text.hpp"

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
  unsigned char out[32];
  const int len = EVP_EncodeBlock(out, d.data(), static_cast<int>(d.size()));
  return {reinterpret_cast<const char*>(out), static_cast<std::size_t>(len)};
}

}  // namespace nubo::store
