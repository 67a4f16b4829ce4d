// The exact schedule: a time-indexed mixed-integer program (Pritsker, Watters and Wolfe 1969's
// formulation of scheduling with resource limits), solved by CBC.
//   x[j,w,s] = 1: job j runs its reserved way w from slot s; y[j] = 1: its cloud offer;
//   u[j] = 1: left out (only for a job with no cloud offer in time; at a penalty above any cost).
//   each job:             sum x[j,.,.] + y[j] + u[j] = 1
//   each pool and slot t: sum of nodes of x[j,w,s] with s <= t < s + slots(w)  <= free(t)
//   minimise              sum cloud_cost[j] y[j] + penalty u[j] + eps * s x[j,w,s]
// The reservations' price is spent either way, so a job on them costs nothing more; eps (a
// millionth of a dollar per slot) starts reserved jobs as early as they can among equal costs.
#include <cmath>
#include <limits>

#include "cost/schedule/mip.hpp"
#include "cost/schedule/schedule_model.hpp"

namespace nubo::cost::schedule_detail {
namespace {

constexpr double kEarlier = 1e-6;  // $ per slot of a reserved start

}  // namespace

std::size_t exact_size(const Model& m) {
  std::size_t n = 0;
  for (const auto& w : m.jobs) {
    n += 1;  // its cloud offer, or being left out
    for (const auto& way : w.reserved)
      n += static_cast<std::size_t>(way.last - way.first + 1) *
           (1 + static_cast<std::size_t>(way.slots));
  }
  return n;
}

Solved solve_exact(const Model& m, double time_limit_s, const std::vector<Choice>* start) {
  Mip mip;
  std::vector<int> job_row;
  for (std::size_t j = 0; j < m.jobs.size(); ++j) job_row.push_back(mip.add_row(1, 1));
  // Capacity rows only where some way can run.
  std::vector<std::vector<int>> capacity_row(m.pools.size(), std::vector<int>(m.slots, -1));
  const auto row_of = [&](std::size_t pool, int slot) {
    auto& r = capacity_row[pool][static_cast<std::size_t>(slot)];
    if (r < 0) r = mip.add_row(-1e30, m.pools[pool].capacity[static_cast<std::size_t>(slot)]);
    return r;
  };
  struct Column {
    std::size_t job;
    Choice choice;
  };
  std::vector<Column> columns;
  double most_earlier = 0;  // the largest the tie-break terms can add to any solution
  for (std::size_t j = 0; j < m.jobs.size(); ++j) {
    const auto& w = m.jobs[j];
    double latest = 0;
    for (std::size_t k = 0; k < w.reserved.size(); ++k) {
      const auto& way = w.reserved[k];
      for (int s = way.first; s <= way.last; ++s) {
        std::vector<std::pair<int, double>> entries{{job_row[j], 1.0}};
        for (int t = s; t < s + way.slots; ++t)
          entries.emplace_back(row_of(way.pool, t), static_cast<double>(way.nodes));
        mip.add_column(kEarlier * s, 0, 1, true, entries);
        columns.push_back({j, {Choice::reserved, k, s}});
        latest = std::max(latest, kEarlier * s);
      }
    }
    most_earlier += latest;
    if (w.cloud) {
      mip.add_column(w.cloud_cost(), 0, 1, true, {{job_row[j], 1.0}});
      columns.push_back({j, {Choice::cloud, 0, 0}});
    } else {
      mip.add_column(kUnplacedPenalty, 0, 1, true, {{job_row[j], 1.0}});
      columns.push_back({j, {Choice::none, 0, 0}});
    }
  }
  // The heuristic's schedule bounds the search: only a cheaper one is looked for, and it stands
  // when none is found in the time.
  const double cutoff =
      start ? dollars(m, *start) + most_earlier + 1e-6 : std::numeric_limits<double>::infinity();
  const auto r = mip.solve(time_limit_s, cutoff);
  Solved out;
  out.choices.assign(m.jobs.size(), Choice{});
  if (!r.solved) {
    // Nothing found in the time: the starting schedule stands (it is feasible).
    if (start) out.choices = *start;
  } else {
    for (std::size_t c = 0; c < columns.size(); ++c)
      if (r.values[c] > 0.5) out.choices[columns[c].job] = columns[c].choice;
  }
  out.optimal = r.optimal;
  out.bound = std::max(0.0, r.bound - most_earlier);
  return out;
}

}  // namespace nubo::cost::schedule_detail
