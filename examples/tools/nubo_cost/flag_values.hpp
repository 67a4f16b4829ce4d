// Flag values nubo-cost reads itself (CLI11 checks the simple ones): each failure an
// invalid_argument error naming the flag.
#pragma once

#include <string>

namespace nubo_cost {

[[noreturn]] void bad(const std::string& message);
// A whole-string number, >= 0.
double number(const std::string& text, const std::string& flag);

}  // namespace nubo_cost
