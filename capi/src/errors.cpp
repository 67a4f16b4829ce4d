// Status codes, the thread's last error, versions, and the environment's check.
#include <string>

#include "guard.hpp"
#include "nubo.h"
#include "nubo/env.hpp"
#include "nubo/error.hpp"
#include "nubo/version.h"

namespace nubo::capi {

// The C status and the C++ error code are the same numbers: the bindings and the docs rely on it.
#define NUBO_SAME_CODE(status, errc) \
  static_assert(static_cast<int>(status) == static_cast<int>(Errc::errc), #status " != " #errc)
NUBO_SAME_CODE(NUBO_OK, ok);
NUBO_SAME_CODE(NUBO_ERR_INVALID_ARGUMENT, invalid_argument);
NUBO_SAME_CODE(NUBO_ERR_NOT_FOUND, not_found);
NUBO_SAME_CODE(NUBO_ERR_UNAVAILABLE, unavailable);
NUBO_SAME_CODE(NUBO_ERR_IO, io);
NUBO_SAME_CODE(NUBO_ERR_CORRUPT, corrupt);
NUBO_SAME_CODE(NUBO_ERR_TIMEOUT, timeout);
NUBO_SAME_CODE(NUBO_ERR_CANCELLED, cancelled);
NUBO_SAME_CODE(NUBO_ERR_UNSUPPORTED, unsupported);
NUBO_SAME_CODE(NUBO_ERR_OUT_OF_MEMORY, out_of_memory);
NUBO_SAME_CODE(NUBO_ERR_INTERNAL, internal);
#undef NUBO_SAME_CODE

namespace {

// Each thread has its own message, so one thread's failure never overwrites another's.
thread_local std::string t_message;
// Set instead of t_message when storing the message itself failed; a static string.
thread_local const char* t_fallback = nullptr;

}  // namespace

nubo_status fail(nubo_status status, const char* function, std::string_view message) noexcept {
  try {
    t_message.assign(function);
    t_message += ": ";
    t_message += nubo::printable(message);  // a name in it may come from an archive or a peer
    t_fallback = nullptr;
  } catch (...) {
    t_fallback = "out of memory while recording the error message";
  }
  return status;
}

nubo_status unsupported(const char* function, const char* option) noexcept {
  try {
    return fail(NUBO_ERR_UNSUPPORTED, function,
                std::string("this nubo was built without the capability (") + option +
                    "=OFF): rebuild with it ON");
  } catch (...) {  // the string itself could not be made
    return fail(NUBO_ERR_UNSUPPORTED, function, "this nubo was built without the capability");
  }
}

nubo_status to_status(Errc code) noexcept {
  const int value = static_cast<int>(code);
  if (value <= NUBO_OK || value > NUBO_ERR_INTERNAL) return NUBO_ERR_INTERNAL;
  return static_cast<nubo_status>(value);
}

}  // namespace nubo::capi

extern "C" {

NUBO_C_API const char* nubo_status_string(nubo_status status) {
  // The C names are part of the ABI's text, kept here rather than borrowed from errc_name(),
  // whose string_view promises no NUL terminator.
  switch (status) {
    case NUBO_OK:
      return "ok";
    case NUBO_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case NUBO_ERR_NOT_FOUND:
      return "not found";
    case NUBO_ERR_UNAVAILABLE:
      return "unavailable";
    case NUBO_ERR_IO:
      return "I/O error";
    case NUBO_ERR_CORRUPT:
      return "corrupt data";
    case NUBO_ERR_TIMEOUT:
      return "timed out";
    case NUBO_ERR_CANCELLED:
      return "cancelled";
    case NUBO_ERR_UNSUPPORTED:
      return "unsupported";
    case NUBO_ERR_OUT_OF_MEMORY:
      return "out of memory";
    case NUBO_ERR_INTERNAL:
      return "internal error";
    case NUBO_STATUS_MAX_ENUM:
      break;
  }
  return "unknown status";
}

NUBO_C_API const char* nubo_last_error(void) {
  using namespace nubo::capi;
  return t_fallback != nullptr ? t_fallback : t_message.c_str();
}

#define NUBO_STR2(x) #x
#define NUBO_STR(x) NUBO_STR2(x)
NUBO_C_API const char* nubo_version(void) {
  return NUBO_STR(NUBO_VERSION_MAJOR) "." NUBO_STR(NUBO_VERSION_MINOR) "." NUBO_STR(
      NUBO_VERSION_PATCH);
}

NUBO_C_API int nubo_abi_version(void) {
  return NUBO_ABI_VERSION;
}

NUBO_C_API nubo_status nubo_check_environment(void) {
  return nubo::capi::guard(__func__, [] { nubo::check_environment(); });
}

}  // extern "C"
