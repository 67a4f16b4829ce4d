// An estimate as the plans' JSON writes it (docs/cost.md): one shape wherever an estimate is
// printed (plans, schedules).
#pragma once

#include <nlohmann/json.hpp>

#include "nubo/cost.hpp"

namespace nubo::cost {

nlohmann::json estimate_json(const Estimate& e);

}  // namespace nubo::cost
