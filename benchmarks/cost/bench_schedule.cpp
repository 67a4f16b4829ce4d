// Queue planner speed and savings (benchmarks/bench_schedule.sh runs it).
//
// Queues are a generated month on the catalog nubo embeds, with two p4d.24xlarge reserved for
// the month at the catalog's 1-year price: 70% short interruptible experiments (0.5-6 h of an
// 8 x A100 box, due 1-3 days after they arrive), 20% medium runs (6-24 h, not interruptible, due
// 2-4 times their length later), 10% long deadline-bound runs (2-6 days, 1-2 nodes, due 1.5
// times their length later). Every job's work is stated in FLOPs with a 30 GB GPU memory need.
//
//   nubo-schedule-bench speed [SIZES...]   time to schedule each size, exact and heuristic
//                                          (the median of three runs)
//   nubo-schedule-bench month JOBS         the schedule's cost against the two baselines
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "nubo/schedule.hpp"

namespace nc = nubo::cost;

namespace {

// FLOPs for `hours` on one p4d.24xlarge: 8 x 312 TFLOP/s of bf16 at 40% MFU.
constexpr double kHour = 8 * 312e12 * 0.4 * 3600;

nc::Queue month(std::size_t jobs, unsigned seed) {
  std::mt19937 rng(seed);
  const auto uniform = [&](double a, double b) {
    return std::uniform_real_distribution<double>(a, b)(rng);
  };
  nc::Queue q;
  q.horizon_h = 720;
  nc::Reservation r;
  r.instance = "p4d.24xlarge";
  r.region = "us-east-1";
  r.count = 2;
  q.reservations.push_back(r);
  for (std::size_t i = 0; i < jobs; ++i) {
    nc::QueueJob j;
    const double kind = uniform(0, 1);
    double hours = 0, slack = 0;
    if (kind < 0.7) {
      hours = uniform(0.5, 6);
      slack = uniform(24, 72);
      j.interruptible = true;
      j.tag = "experiments";
      j.name = "exp-" + std::to_string(i);
      j.workload.checkpoint_bytes = 5e9;
    } else if (kind < 0.9) {
      hours = uniform(6, 24);
      slack = hours * uniform(1, 3);
      j.tag = "runs";
      j.name = "run-" + std::to_string(i);
    } else {
      hours = uniform(48, 144);
      slack = hours * 0.5;
      j.max_nodes = 2;
      j.tag = "training";
      j.name = "train-" + std::to_string(i);
      j.workload.checkpoint_bytes = 50e9;
    }
    j.workload.total_flops = hours * kHour;
    j.workload.memory_per_gpu_bytes = 30e9;
    j.release_h = std::floor(uniform(0, std::max(1.0, 700 - hours - slack)));
    j.deadline_h = std::min(720.0, j.release_h + hours + slack);
    q.jobs.push_back(j);
  }
  return q;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int speed(const nc::Catalog& catalog, const std::vector<std::size_t>& sizes) {
  std::printf("| jobs | method | time | optimal | gap to the bound | placed on reservations |\n");
  std::printf("|---:|---|---:|---|---:|---:|\n");
  for (const auto n : sizes) {
    const auto q = month(n, 7);
    for (auto method : {nc::ScheduleMethod::exact, nc::ScheduleMethod::heuristic}) {
      nc::ScheduleOptions o;
      o.method = method;
      o.time_limit_s = 60;
      // The median of three runs: the machine is shared.
      std::vector<double> times;
      nc::Schedule s;
      for (int run = 0; run < 3; ++run) {
        const auto started = std::chrono::steady_clock::now();
        s = nc::schedule(catalog, q, o);
        times.push_back(seconds_since(started));
      }
      std::sort(times.begin(), times.end());
      const double t = times[1];
      std::size_t reserved = 0;
      for (const auto& j : s.jobs) reserved += j.placement == nc::Placement::reserved;
      std::printf("| %zu | %s | %.2f s | %s | %.2f%% | %zu |\n", n,
                  std::string(nc::schedule_method_name(method)).c_str(), t,
                  s.optimal ? "yes" : "no", 100 * s.gap, reserved);
    }
  }
  return 0;
}

// Each job alone, as plan gives it: the cheapest offer (spot where allowed, or on demand only)
// that finishes by its deadline; the reservations are paid and unused.
double alone(const nc::Catalog& catalog, const nc::Queue& q, bool on_demand_only,
             std::size_t* missed) {
  double dollars = 0;
  for (const auto& j : q.jobs) {
    nc::PlanRequest r;
    r.pricings = j.interruptible && !on_demand_only
                     ? std::vector<nc::Pricing>{nc::Pricing::on_demand, nc::Pricing::spot}
                     : std::vector<nc::Pricing>{nc::Pricing::on_demand};
    r.min_nodes = j.min_nodes;
    r.max_nodes = j.max_nodes;
    r.deadline_s = (j.deadline_h - j.release_h) * 3600;
    r.limit = 1;
    const auto p = nc::plan(catalog, j.workload, r);
    if (p.ranked.empty()) {
      ++*missed;
      continue;
    }
    dollars += p.ranked[0].total_cost();
  }
  return dollars;
}

int month_savings(const nc::Catalog& catalog, std::size_t n) {
  const auto q = month(n, 11);
  const auto s = nc::schedule(catalog, q);
  const double committed = s.costs.committed_used + s.costs.committed_idle;
  std::size_t missed_cheapest = 0, missed_on_demand = 0;
  const double cheapest = committed + alone(catalog, q, false, &missed_cheapest);
  const double on_demand = committed + alone(catalog, q, true, &missed_on_demand);
  std::size_t reserved = 0, spot = 0, od = 0;
  double moved = 0;  // what the jobs on the reservations would have cost alone
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    const auto& j = s.jobs[i];
    spot += j.placement == nc::Placement::spot;
    od += j.placement == nc::Placement::on_demand;
    if (j.placement != nc::Placement::reserved) continue;
    ++reserved;
    nc::Queue one = q;
    one.jobs = {q.jobs[i]};
    std::size_t m = 0;
    moved += alone(catalog, one, false, &m);
  }
  std::printf(
      "| | total | committed (used / idle) | on-demand | spot | jobs missing their deadline |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  std::printf("| everything on demand | %s | %s | %s | - | %zu |\n",
              nc::format_money(on_demand).c_str(), nc::format_money(committed).c_str(),
              nc::format_money(on_demand - committed).c_str(), missed_on_demand);
  std::printf("| each job's own cheapest (plan) | %s | %s | - | - | %zu |\n",
              nc::format_money(cheapest).c_str(), nc::format_money(committed).c_str(),
              missed_cheapest);
  std::printf(
      "| **schedule** (%s%s) | **%s** | %s / %s | %s | %s | %zu |\n",
      std::string(nc::schedule_method_name(s.method)).c_str(), s.optimal ? ", optimal" : "",
      nc::format_money(s.costs.total()).c_str(), nc::format_money(s.costs.committed_used).c_str(),
      nc::format_money(s.costs.committed_idle).c_str(), nc::format_money(s.costs.on_demand).c_str(),
      nc::format_money(s.costs.spot).c_str(), s.unplaced());
  std::printf(
      "\n%zu jobs: %zu on the reservations, %zu on spot, %zu on demand; gap to the bound "
      "%.2f%%, solved in %.2f s.\n",
      n, reserved, spot, od, 100 * s.gap, s.solve_s);
  std::printf(
      "Saving: %s (%.1f%%) against each job's own cheapest, %s (%.1f%%) against "
      "everything on demand. The jobs the schedule put on the reservations would have "
      "cost %s on their own cheapest offers: that is where the saving against plan "
      "comes from (the reservations are paid either way); against on demand, spot adds "
      "the rest.\n",
      nc::format_money(cheapest - s.costs.total()).c_str(),
      100 * (cheapest - s.costs.total()) / cheapest,
      nc::format_money(on_demand - s.costs.total()).c_str(),
      100 * (on_demand - s.costs.total()) / on_demand, nc::format_money(moved).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto catalog = nc::Catalog::current();
  const std::string mode = argc > 1 ? argv[1] : "speed";
  if (mode == "month")
    return month_savings(catalog, argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 300);
  std::vector<std::size_t> sizes;
  for (int i = 2; i < argc; ++i) sizes.push_back(std::strtoul(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {10, 30, 100, 1000};
  return speed(catalog, sizes);
}
