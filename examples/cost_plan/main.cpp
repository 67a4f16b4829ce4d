// nubo-plan-example: what a training run costs on which cloud offer, from C++: a 7B model on
// 2 billion tokens by a deadline and a budget, over on-demand and spot offers of the catalog
// in force (embedded, or refreshed by `nubo-cost catalog update`). Prints the cheapest options
// with the date and source of their price, the Pareto frontier, and why the others were left
// out. nubo-cost plan does the same from the command line.
//
//   nubo-plan-example                 # 7B parameters, 2e9 tokens, 48 h, $2000
//   nubo-plan-example 1.3e9 5e9 24 500
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nubo/cost.hpp"
#include "nubo/error.hpp"

namespace {

double arg(int argc, char** argv, int i, double fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const double v = std::strtod(argv[i], &end);
  if (end == argv[i] || *end != '\0' || !(v > 0)) {
    std::fprintf(stderr,
                 "usage: nubo-plan-example [PARAMETERS [TOKENS [HOURS [BUDGET]]]]: '%s' "
                 "is not a positive number\n",
                 argv[i]);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  nubo::cost::Workload work;
  work.parameters = arg(argc, argv, 1, 7e9);
  work.tokens = arg(argc, argv, 2, 2e9);
  work.sharding = -1;                            // the least ZeRO stage that fits the GPU's memory
  work.checkpoint_bytes = work.parameters * 16;  // weights and Adam's states, as saved

  nubo::cost::PlanRequest request;
  request.pricings = {nubo::cost::Pricing::on_demand, nubo::cost::Pricing::spot};
  request.deadline_s = arg(argc, argv, 3, 48) * 3600;
  request.budget = arg(argc, argv, 4, 2000);
  request.max_nodes = 4;
  request.limit = 5;

  try {
    const auto catalog = nubo::cost::Catalog::current();
    const auto plan = nubo::cost::plan(catalog, work, request);
    std::printf("%zu of %zu options meet %.0f h and $%.0f; the cheapest:\n", plan.feasible,
                plan.considered, request.deadline_s / 3600, request.budget);
    for (const auto& e : plan.ranked) {
      std::printf("  %-40s %7.1f h %10.2f $  (%s, priced %s)\n", e.label().c_str(), e.hours(),
                  e.total_cost(), e.provider.c_str(), e.price_date.c_str());
    }
    std::printf("Pareto frontier (faster costs more):\n");
    for (const auto& e : plan.frontier)
      std::printf("  %-40s %7.1f h %10.2f $\n", e.label().c_str(), e.hours(), e.total_cost());
    std::printf("%zu options left out, for example:\n", plan.excluded());
    int shown = 0;
    for (const auto& x : plan.exclusions()) {
      if (shown++ == 3) break;
      std::printf("  %s: %s\n", x.subject.c_str(), x.reason.c_str());
    }
    return plan.ranked.empty() ? 1 : 0;
  } catch (const nubo::Error& e) {
    std::fprintf(stderr, "nubo-plan-example: %s\n", e.what());
    return 1;
  }
}
