// What a call throws, for tests that check the message: the nubo::Error's text (its code in
// *code when asked), or "no error" when it returned.
#pragma once

#include <functional>
#include <string>

#include "nubo/error.hpp"

namespace nubo_test {

inline std::string error_of(const std::function<void()>& f, nubo::Errc* code = nullptr) {
  try {
    f();
  } catch (const nubo::Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "no error";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace nubo_test
