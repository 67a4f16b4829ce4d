// The few cryptographic primitives nubo's protocols build on (libcrypto): HMAC-SHA256 to prove
// knowledge of a shared token and to seal messages, fresh random bytes for nonces, a
// constant-time comparison of MACs, and AES-256-GCM for data at rest. Used by transfer's
// send/serve handshake, the tcp:// rendezvous store and encrypted archives.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>

namespace nubo::crypto {

using Mac = std::array<std::byte, 32>;

Mac hmac_sha256(const std::string& key, std::span<const std::byte> data);
// Of the parts one after the other, as if they were one message.
Mac hmac_sha256(const std::string& key, std::initializer_list<std::span<const std::byte>> parts);
// Error(unavailable) when libcrypto has no randomness to give.
void random_bytes(std::span<std::byte> out);
bool same_mac(const Mac& a, const Mac& b);  // constant time

// AES-256-GCM with a 96-bit nonce and a 128-bit tag. seal writes the ciphertext (as long as
// `plain`) then the tag to `out` (plain.size() + 16 bytes); open checks the tag and writes the
// plaintext (sealed.size() - 16 bytes), or returns false and leaves `out`'s contents unspecified.
using AesKey = std::array<std::byte, 32>;
using GcmNonce = std::array<std::byte, 12>;
constexpr std::size_t kGcmTagSize = 16;
void aes256_gcm_seal(const AesKey& key, const GcmNonce& nonce, std::span<const std::byte> aad,
                     std::span<const std::byte> plain, std::span<std::byte> out);
bool aes256_gcm_open(const AesKey& key, const GcmNonce& nonce, std::span<const std::byte> aad,
                     std::span<const std::byte> sealed, std::span<std::byte> out);

}  // namespace nubo::crypto
