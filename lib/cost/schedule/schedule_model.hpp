// What the schedulers decide over: the time grid, each job's ways to run (a reservation's nodes
// from a start slot, or its cheapest cloud offer), and an assignment of one way to each job.
// Built once per queue (options.cpp); the exact solver (exact.cpp), the heuristic (heuristic.cpp)
// and the bound (bound.cpp) all read the same model, so their costs compare.
#pragma once

#include <chrono>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nubo/schedule.hpp"

namespace nubo::cost::schedule_detail {

// Reservation capacity per slot, after what running jobs hold.
struct Pool {
  std::size_t reservation = 0;  // index in the queue's reservations
  const Instance* instance = nullptr;
  double hourly = 0;          // committed $/h per instance
  std::vector<int> capacity;  // instances free in each slot
};

// A job on `nodes` of a pool, `slots` long, starting in [first, last].
struct ReservedWay {
  std::size_t pool = 0;
  int nodes = 1;
  int slots = 1;
  int first = 0, last = 0;
  Estimate estimate;
};

struct JobWays {
  std::vector<ReservedWay> reserved;
  std::optional<Estimate> cloud;     // the cheapest offer that finishes by the deadline
  std::optional<Estimate> cheapest;  // the cheapest offer, deadline aside
  std::optional<Estimate> fastest;   // when none finishes in time: how close the best comes
  std::optional<Estimate> spot;      // interruptible: the cheapest spot offer, deadline aside
  std::string spot_excluded;         // interruptible without one: the planner's reason
  std::string excluded;              // when no offer runs it at all: the planner's first reason
  double release_h = 0, deadline_h = 0;
  double cloud_cost() const { return cloud ? cloud->total_cost() : 0; }
};

struct Model {
  double slot_h = 1;
  int slots = 0;
  double horizon_h = 0;
  std::vector<Pool> pools;
  std::vector<JobWays> jobs;
  std::vector<std::string> notes;
};

// What each job was given: a reserved way from a start slot, its cloud offer, or nothing.
struct Choice {
  enum Kind { reserved, cloud, none } kind = none;
  std::size_t way = 0;
  int start = 0;
};

// The penalty per unplaced job in the solvers' objective: above any schedule's dollars, so that
// a job is left out only when nothing can take it.
constexpr double kUnplacedPenalty = 1e9;

// The model's dollars for an assignment (unplaced jobs at the penalty).
double dollars(const Model& m, const std::vector<Choice>& choices);

// Pricing each job's ways is most of a large queue's time (about 0.2 ms a job over the embedded
// catalog): past `deadline`, Error(timeout) says how far it got and what to give instead.
Model build_model(const Catalog& catalog, const Queue& queue, const ScheduleOptions& options,
                  std::chrono::steady_clock::time_point deadline);

// Whether `way` fits in the pool's capacity from `start`, given `used` (instances per pool per
// slot already taken).
bool fits(const Model& m, const ReservedWay& way, int start,
          const std::vector<std::vector<int>>& used);
void take(const ReservedWay& way, int start, std::vector<std::vector<int>>& used, int sign = 1);

struct Solved {
  std::vector<Choice> choices;
  bool optimal = false;
  double bound = 0;  // a lower bound on dollars(), on this model
};
Solved solve_exact(const Model& m, double time_limit_s, const std::vector<Choice>* start);
// The exact program's coefficients, counted before it is built; past kMaxExactSize its memory
// would be unbounded in what a queue file and --slot can ask for.
std::size_t exact_size(const Model& m);
constexpr std::size_t kMaxExactSize = 5'000'000;
Solved solve_heuristic(const Model& m, const std::vector<int>& priorities);
// A lower bound on the dollars of any assignment: the LP relaxation of capacity in node-slots,
// solved within `time_limit_s`; the bound each job gives alone when there is no time (or no CBC).
double lower_bound(const Model& m, double time_limit_s);
// How many of the exact program's coefficients CBC works through in a second here (about 150k
// measured, without preprocessing): a program larger than the time left allows is not built.
constexpr double kExactCoefficientsPerSecond = 100'000;

// The schedule a solved model makes: where and when each job runs, the fleet, the costs and
// the reasons.
Schedule assemble(const Model& m, const Queue& queue, const Solved& solved);

}  // namespace nubo::cost::schedule_detail
