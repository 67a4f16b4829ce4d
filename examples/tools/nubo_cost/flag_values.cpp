#include "flag_values.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "nubo/error.hpp"

namespace nubo_cost {

void bad(const std::string& message) {
  throw nubo::Error(nubo::Errc::invalid_argument, message);
}

double number(const std::string& text, const std::string& flag) {
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    bad(flag + ": expected a number, got '" + text + "'");
  if (v < 0) bad(flag + ": must not be negative, got '" + text + "'");
  return v;
}

}  // namespace nubo_cost
