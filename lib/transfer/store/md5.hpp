// MD5, as object stores name parts and whole objects by it (ETags, Content-MD5).
#pragma once

#include <array>
#include <memory>
#include <string>

#include "transfer/bytes.hpp"

namespace nubo::store {

using Md5 = std::array<unsigned char, 16>;
Md5 md5_of(transfer::Bytes data);
std::string md5_hex(const Md5& d);
std::string md5_base64(const Md5& d);

// MD5 of bytes fed in order: an object's content checked against the ETag of an object put
// whole, while its parts go elsewhere.
class Md5Stream {
 public:
  Md5Stream();
  ~Md5Stream();
  Md5Stream(const Md5Stream&) = delete;
  Md5Stream& operator=(const Md5Stream&) = delete;
  void update(transfer::Bytes data);
  Md5 digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nubo::store
