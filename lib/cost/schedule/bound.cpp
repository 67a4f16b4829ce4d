// A lower bound on what any schedule of the model costs, cheap enough for any queue: the linear
// relaxation in which a job may take a fraction of a reserved way and a pool's capacity is its
// node-slots over the horizon, whenever they fall. Every schedule is a solution of it, so none
// costs less; the heuristic's gap is stated against it.
#include "cost/schedule/mip.hpp"
#include "cost/schedule/schedule_model.hpp"

namespace nubo::cost::schedule_detail {

double lower_bound(const Model& m, double time_limit_s) {
  // Without CBC, or without time for the LP (about 11 s for 100,000 jobs), the bound every job
  // gives alone: nothing when a reservation may take it.
  std::size_t columns = 0;
  for (const auto& w : m.jobs) columns += 1 + w.reserved.size();
  if (!Mip::available() ||
      static_cast<double>(columns) > kExactCoefficientsPerSecond * time_limit_s) {
    double alone = 0;
    for (const auto& w : m.jobs)
      if (w.reserved.empty()) alone += w.cloud ? w.cloud_cost() : kUnplacedPenalty;
    return alone;
  }
  Mip lp;
  std::vector<int> pool_row;
  for (const auto& p : m.pools) {
    double node_slots = 0;
    for (int c : p.capacity) node_slots += c;
    pool_row.push_back(lp.add_row(-1e30, node_slots));
  }
  for (const auto& w : m.jobs) {
    const int row = lp.add_row(1, 1);
    for (const auto& way : w.reserved)
      lp.add_column(0, 0, 1, false,
                    {{row, 1.0}, {pool_row[way.pool], 1.0 * way.nodes * way.slots}});
    lp.add_column(w.cloud ? w.cloud_cost() : kUnplacedPenalty, 0, 1, false, {{row, 1.0}});
  }
  const auto r = lp.solve(time_limit_s);
  return r.solved ? std::max(0.0, r.objective - 1e-6 * std::max(1.0, r.objective)) : 0;
}

}  // namespace nubo::cost::schedule_detail
