#include "text_out.hpp"

#include <cstring>

#include "nubo/error.hpp"

namespace nubo::capi {

void copy_text_out(const std::string& text, const char* what, char* buf, std::size_t capacity,
                   std::size_t* needed) {
  const std::size_t size = text.size() + 1;  // with the NUL
  if (needed != nullptr) *needed = size;
  if (buf == nullptr || capacity < size) {
    if (buf != nullptr && capacity > 0) buf[0] = '\0';
    throw Error(Errc::invalid_argument,
                (buf == nullptr ? std::string("buf is NULL")
                                : "capacity " + std::to_string(capacity) + " is too small") +
                    ": " + what + " needs " + std::to_string(size) +
                    " bytes with its NUL (returned in *needed)");
  }
  std::memcpy(buf, text.c_str(), size);
}

}  // namespace nubo::capi
