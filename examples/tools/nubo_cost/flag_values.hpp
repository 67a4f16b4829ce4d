// Flag values nubo-cost reads itself (CLI11 checks the simple ones): each failure an
// invalid_argument error naming the flag.
#pragma once

#include <string>
#include <vector>

#include "commands.hpp"
#include "nubo/cost.hpp"

namespace nubo_cost {

[[noreturn]] void bad(const std::string& message);
// A whole-string number, >= 0.
double number(const std::string& text, const std::string& flag);
// The pricings --pricing, --spot and --reserved ask for; on-demand alone by default.
std::vector<nubo::cost::Pricing> pricings_of(const PlanCommand& c);

}  // namespace nubo_cost
