// MD5, as object stores name parts and whole objects by it (ETags, Content-MD5).
#pragma once

#include <array>
#include <string>

#include "transfer/bytes.hpp"

namespace nubo::store {

using Md5 = std::array<unsigned char, 16>;
Md5 md5_of(transfer::Bytes data);
std::string md5_hex(const Md5& d);
std::string md5_base64(const Md5& d);

}  // namespace nubo::store
