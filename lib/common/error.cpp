#include "nubo/error.hpp"

namespace nubo {

std::string_view errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::ok:
      return "ok";
    case Errc::invalid_argument:
      return "invalid argument";
    case Errc::not_found:
      return "not found";
    case Errc::unavailable:
      return "unavailable";
    case Errc::io:
      return "I/O error";
    case Errc::corrupt:
      return "corrupt data";
    case Errc::timeout:
      return "timed out";
    case Errc::cancelled:
      return "cancelled";
    case Errc::unsupported:
      return "unsupported";
    case Errc::out_of_memory:
      return "out of memory";
    case Errc::internal:
      return "internal error";
  }
  return "unknown error";
}

}  // namespace nubo
