// The one way a C entry point runs C++ code: every exception is caught here, turned into a
// nubo_status, and its message kept for nubo_last_error(). Nothing else in capi/ catches.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "nubo.h"
#include "nubo/error.hpp"

namespace nubo::capi {

// Stores "<function>: <message>" as the calling thread's last error and returns status. Never
// throws: if the message cannot be stored, nubo_last_error() says so instead.
nubo_status fail(nubo_status status, const char* function, std::string_view message) noexcept;

// What an entry point of a capability the library was built without answers (the generated
// stubs): NUBO_ERR_UNSUPPORTED, naming the CMake option that is off.
nubo_status unsupported(const char* function, const char* option) noexcept;

// nubo::Errc and nubo_status are one to one (static_asserts in errors.cpp); a code outside the
// enum (or Errc::ok, which no error should carry) is a bug, reported as internal.
nubo_status to_status(Errc code) noexcept;

// Throws the invalid_argument error for a NULL pointer the caller must not pass; `name` is the
// parameter as the header spells it ("out", "options").
template <class T>
T* require(T* pointer, const char* name) {
  if (pointer == nullptr) throw Error(Errc::invalid_argument, std::string(name) + " is NULL");
  return pointer;
}

// Throws the invalid_argument error for an index past the end of what `owner` ("the plan") holds:
// "index 9 is out of range: the plan has 3 ranked estimates".
inline std::size_t require_index(std::size_t index, std::size_t size, std::string_view owner,
                                 std::string_view items) {
  if (index >= size)
    throw Error(Errc::invalid_argument, "index " + std::to_string(index) +
                                            " is out of range: " + std::string(owner) + " has " +
                                            std::to_string(size) + " " + std::string(items));
  return index;
}

template <class Body>
nubo_status guard(const char* function, Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return NUBO_OK;
  } catch (const Error& e) {
    return fail(to_status(e.code()), function, e.what());
  } catch (const std::bad_alloc&) {
    return fail(NUBO_ERR_OUT_OF_MEMORY, function, "out of memory");
  } catch (const std::exception& e) {
    // Only nubo::Error is part of the contract; anything else escaped a check inside nubo.
    return fail(NUBO_ERR_INTERNAL, function, e.what());
  } catch (...) {
    return fail(NUBO_ERR_INTERNAL, function, "unknown exception (a bug in nubo: please report it)");
  }
}

}  // namespace nubo::capi
