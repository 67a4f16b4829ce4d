// The plan as a picture: cost against time for every feasible plan on log-log axes, the Pareto
// frontier as a line, the best three numbered and listed, the deadline and the budget as dashed
// lines. Standalone SVG 1.1, readable in a browser or with rsvg-convert.
#pragma once

#include <string>
#include <vector>

#include "nubo/cost.hpp"

namespace nubo_cost {

struct ChartInput {
  std::vector<nubo::cost::Estimate> plans;     // every feasible plan
  std::vector<nubo::cost::Estimate> frontier;  // fastest first
  std::vector<nubo::cost::Estimate> best;      // the best three, best first
  std::string title, rank;                     // rank: "cost" or "time"
  double deadline_s = 0, budget = 0;
};

std::string plan_svg(const ChartInput& input);

}  // namespace nubo_cost
