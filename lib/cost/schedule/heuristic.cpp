// The heuristic schedule, for queues too large to solve exactly: jobs in order of priority,
// then of what a reservation saves them per node-slot it takes (the cloud offer's cost over the
// reserved way's nodes x slots; jobs with no cloud offer first, as only a reservation can take
// them), each given the reserved way that fits earliest and takes the fewest node-slots, else
// its cloud offer. Then jobs left on the cloud are tried again, dearest first, in case an
// earlier choice left room. The gap to bound.cpp's lower bound is reported with it.
#include <algorithm>
#include <limits>
#include <numeric>

#include "cost/schedule/schedule_model.hpp"

namespace nubo::cost::schedule_detail {
namespace {

double saving_density(const JobWays& w) {
  if (w.reserved.empty()) return 0;
  double fewest = std::numeric_limits<double>::infinity();
  for (const auto& way : w.reserved) fewest = std::min(fewest, 1.0 * way.nodes * way.slots);
  return (w.cloud ? w.cloud_cost() : kUnplacedPenalty) / fewest;
}

// The way and start that fit, earliest finish first, then fewest node-slots.
bool place(const Model& m, const JobWays& w, std::vector<std::vector<int>>& used, Choice& out) {
  bool found = false;
  int best_finish = 0;
  int best_size = 0;
  for (std::size_t k = 0; k < w.reserved.size(); ++k) {
    const auto& way = w.reserved[k];
    for (int s = way.first; s <= way.last; ++s) {
      if (found && s + way.slots > best_finish) break;
      if (!fits(m, way, s, used)) continue;
      const int size = way.nodes * way.slots;
      if (!found || s + way.slots < best_finish ||
          (s + way.slots == best_finish && size < best_size)) {
        found = true;
        best_finish = s + way.slots;
        best_size = size;
        out = {Choice::reserved, k, s};
      }
      break;  // later starts of this way finish later
    }
  }
  if (found) take(w.reserved[out.way], out.start, used);
  return found;
}

}  // namespace

Solved solve_heuristic(const Model& m, const std::vector<int>& priorities) {
  std::vector<std::size_t> order(m.jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> density(m.jobs.size());
  for (std::size_t j = 0; j < m.jobs.size(); ++j) density[j] = saving_density(m.jobs[j]);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (priorities[a] != priorities[b]) return priorities[a] > priorities[b];
    return density[a] > density[b];
  });
  std::vector<std::vector<int>> used(m.pools.size(), std::vector<int>(m.slots, 0));
  Solved out;
  out.choices.assign(m.jobs.size(), Choice{});
  for (const auto j : order) {
    const auto& w = m.jobs[j];
    Choice c;
    if (place(m, w, used, c)) {
      out.choices[j] = c;
    } else if (w.cloud) {
      out.choices[j] = {Choice::cloud, 0, 0};
    }
  }
  // A second pass: cloud jobs, dearest first, onto whatever room is left.
  std::vector<std::size_t> on_cloud;
  for (std::size_t j = 0; j < m.jobs.size(); ++j)
    if (out.choices[j].kind != Choice::reserved && !m.jobs[j].reserved.empty())
      on_cloud.push_back(j);
  std::stable_sort(on_cloud.begin(), on_cloud.end(), [&](std::size_t a, std::size_t b) {
    return m.jobs[a].cloud_cost() > m.jobs[b].cloud_cost();
  });
  for (const auto j : on_cloud) {
    Choice c;
    if (place(m, m.jobs[j], used, c)) out.choices[j] = c;
  }
  return out;
}

}  // namespace nubo::cost::schedule_detail
