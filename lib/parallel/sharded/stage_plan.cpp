// StagePlan (nubo/optimizer.hpp): the one place a ZeRO stage number is checked.
#include <string>

#include "nubo/error.hpp"
#include "nubo/optimizer.hpp"

namespace nubo {

StagePlan StagePlan::of(int stage, std::string_view name) {
  if (stage < 0 || stage > 3)
    throw Error(Errc::invalid_argument,
                std::string(name) + " " + std::to_string(stage) + " (0 to 3)");
  return {.stage = stage,
          .state_sharded = stage >= 1,
          .gradients_sharded = stage >= 2,
          .parameters_sharded = stage == 3};
}

}  // namespace nubo
