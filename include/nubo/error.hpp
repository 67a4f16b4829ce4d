// nubo::Error: the one exception type of the C++ API. Its code maps one to one onto the C ABI's
// nubo_status, and its message says what went wrong and what to do.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "nubo/export.hpp"

namespace nubo {

// Keep in step with nubo_status in capi/nubo.h: the values are part of the ABI.
enum class Errc : int {
  ok = 0,
  invalid_argument = 1,  // a bad value from the caller: an argument, a flag, an env variable
  not_found = 2,         // a named thing (file, device, model, key) does not exist
  unavailable = 3,       // a device, driver, plugin or peer is not there or not usable
  io = 4,                // the operating system refused a read, write, open or connect
  corrupt = 5,           // data failed a check: a checksum, a magic number, a format rule
  timeout = 6,           // something did not happen in the time allowed
  cancelled = 7,         // the caller asked to stop
  unsupported = 8,       // valid request that this build or device cannot do
  out_of_memory = 9,     // an allocation failed
  internal = 10,         // a bug in nubo: please report it
};

NUBO_API std::string_view errc_name(Errc code) noexcept;

// `text` as a terminal may show it: a name from an archive, a peer or a server cannot move the
// cursor, clear the screen, reorder what follows it or forge a line. Control characters become
// C escapes (\n, \t, \x1b), and so do bytes that are not UTF-8 and the C1 controls; the
// bidirectional overrides become \u202e. Everything else, UTF-8 included, is kept. For
// messages, listings and logs; JSON keeps the exact text.
NUBO_API std::string printable(std::string_view text);

class NUBO_API Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace nubo
