// schedule(): the model built once, solved exactly or by the heuristic, assembled; and the
// "what if" of one more reservation.
#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "common/text.hpp"
#include "cost/estimate_json.hpp"
#include "cost/schedule/mip.hpp"
#include "cost/schedule/schedule_model.hpp"
#include "nubo/error.hpp"

namespace nubo::cost {

std::size_t Schedule::unplaced() const {
  std::size_t n = 0;
  for (const auto& j : jobs) n += j.placement == Placement::unplaced;
  return n;
}

std::string Schedule::to_json() const {
  using nlohmann::json;
  json out_jobs = json::array();
  for (const auto& j : jobs) {
    json o = {{"name", j.name},
              {"tag", j.tag},
              {"placement", placement_name(j.placement)},
              {"start_h", j.start_h},
              {"finish_h", j.finish_h},
              {"deadline_h", j.deadline_h},
              {"cost", j.cost},
              {"reason", j.reason}};
    if (j.placement == Placement::reserved) o["reservation"] = j.reservation;
    if (j.placement != Placement::unplaced) o["estimate"] = estimate_json(j.estimate);
    out_jobs.push_back(std::move(o));
  }
  json out_fleet = json::array();
  for (const auto& f : fleet) out_fleet.push_back({{"kind", f.kind}, {"count", f.count}});
  return json{{"method", schedule_method_name(method)},
              {"optimal", optimal},
              {"bound", bound},
              {"gap", gap},
              {"solve_s", solve_s},
              {"slot_h", slot_h},
              {"horizon_h", horizon_h},
              {"costs",
               {{"committed_used", costs.committed_used},
                {"committed_idle", costs.committed_idle},
                {"on_demand", costs.on_demand},
                {"spot", costs.spot},
                {"total", costs.total()},
                {"by_tag", costs.by_tag}}},
              {"unplaced", unplaced()},
              {"jobs", out_jobs},
              {"fleet", out_fleet},
              {"notes", notes}}
             .dump(2) +
         "\n";
}

Schedule schedule(const Catalog& catalog, const Queue& queue, const ScheduleOptions& options) {
  using namespace schedule_detail;
  const auto started = std::chrono::steady_clock::now();
  // The time limit covers everything: building the model, solving it, bounding it.
  const auto left = [&] {
    return options.time_limit_s -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const auto m =
      build_model(catalog, queue, options,
                  started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(options.time_limit_s)));
  std::vector<int> priorities;
  for (const auto& j : queue.jobs) priorities.push_back(j.priority);
  auto method = options.method;
  std::vector<std::string> notes;
  const auto size = exact_size(m);  // the exact program's coefficients, counted once
  if (method == ScheduleMethod::automatic) {
    method = queue.jobs.size() <= options.exact_up_to ? ScheduleMethod::exact
                                                      : ScheduleMethod::heuristic;
    if (method == ScheduleMethod::exact && !Mip::available()) {
      method = ScheduleMethod::heuristic;
      notes.push_back("COIN-OR CBC (coinor-libcbc3) is not installed: planned by the heuristic");
    }
    if (method == ScheduleMethod::exact && size > kMaxExactSize) {
      method = ScheduleMethod::heuristic;
      notes.push_back("the exact program would be too large on " + std::to_string(m.slots) +
                      " slots: planned by the heuristic (a larger --slot keeps it exact)");
    }
  } else if (method == ScheduleMethod::exact && size > kMaxExactSize) {
    throw Error(Errc::invalid_argument, "the exact program would hold " + std::to_string(size) +
                                            " coefficients on " + std::to_string(m.slots) +
                                            " slots, more than " + std::to_string(kMaxExactSize) +
                                            ": give a larger slot, or the heuristic method");
  }
  auto solved = solve_heuristic(m, priorities);
  // The exact program only when CBC can work through it in the time left; else the heuristic's
  // schedule stands, with its gap to the bound.
  if (const double seconds = std::max(0.0, left());
      method == ScheduleMethod::exact &&
      static_cast<double>(size) > kExactCoefficientsPerSecond * seconds) {
    method = ScheduleMethod::heuristic;
    char note[200];
    std::snprintf(note, sizeof note,
                  "the exact program (%zu coefficients) would not finish in the %.1f s left of "
                  "the time limit: planned by the heuristic",
                  size, seconds);
    notes.push_back(note);
  }
  if (method == ScheduleMethod::exact) {
    auto exact = solve_exact(m, left(), &solved.choices);
    // Stopped by its time limit before it improved on its start, CBC may return nothing better.
    if (dollars(m, exact.choices) <= dollars(m, solved.choices) + 1e-9)
      solved.choices = std::move(exact.choices);
    solved.optimal = exact.optimal;
    solved.bound = exact.bound;
  } else {
    solved.bound = lower_bound(m, std::max(0.0, left()));
    solved.optimal = dollars(m, solved.choices) <= solved.bound + 1e-6;
  }
  auto s = assemble(m, queue, solved);
  s.method = method;
  s.notes.insert(s.notes.end(), notes.begin(), notes.end());
  const double committed = s.costs.committed_used + s.costs.committed_idle;
  const double penalties = static_cast<double>(s.unplaced()) * kUnplacedPenalty;
  s.bound = committed + std::max(0.0, solved.bound - penalties);
  s.gap = s.costs.total() > 0 ? std::max(0.0, (s.costs.total() - s.bound) / s.costs.total()) : 0;
  if (solved.optimal) {
    s.bound = s.costs.total();
    s.gap = 0;
  }
  if (method == ScheduleMethod::exact && !solved.optimal) {
    char note[160];
    std::snprintf(note, sizeof note,
                  "the solver stopped at its %.0f s limit: this schedule is within %.1f%% of the "
                  "best possible",
                  options.time_limit_s, 100 * s.gap);
    s.notes.push_back(note);
  }
  s.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return s;
}

WhatIf what_if(const Catalog& catalog, const Queue& queue, const Schedule& without,
               const Reservation& added, const ScheduleOptions& options) {
  auto more = queue;
  more.reservations.push_back(added);
  WhatIf w;
  w.added = added;
  w.schedule = schedule(catalog, more, options);
  w.saving = without.costs.total() - w.schedule.costs.total();
  return w;
}

}  // namespace nubo::cost
