// The few cryptographic primitives nubo's protocols build on (libcrypto): HMAC-SHA256 to prove
// knowledge of a shared token and to seal messages, fresh random bytes for nonces, and a
// constant-time comparison of MACs. Used by transfer's send/serve handshake and by the tcp://
// rendezvous store.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>

namespace nubo::crypto {

using Mac = std::array<std::byte, 32>;

Mac hmac_sha256(const std::string& key, std::span<const std::byte> data);
// Error(unavailable) when libcrypto has no randomness to give.
void random_bytes(std::span<std::byte> out);
bool same_mac(const Mac& a, const Mac& b);  // constant time

}  // namespace nubo::crypto
