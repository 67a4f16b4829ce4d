// Planner speed: plan() against the exhaustive reference over a synthetic catalog, one workload
// at a time, in the same run. Prints a markdown table; benchmarks/bench_cost.sh records it.
//
//   nubo-cost-bench [--rows 10000] [--workloads 100] [--exhaustive-workloads 5] [--seed 1]
//
// The catalog: 200 instance types (GPU model, count, link, network and provider drawn at random)
// in 50 regions each, regional prices varying by +-10%, two thirds with a spot price. This is the
// shape of real catalogs (the same types in many regions), which is what plan() exploits. The
// workloads: random FLOPs, model sizes, batches, datasets and checkpoints, all four pricings,
// 1-4 nodes, a deadline and a budget. The exhaustive planner is slow, so it runs on fewer
// workloads; both are reported per workload (plan(): the best of three runs of each). Each fast
// plan is checked against the exhaustive one where both ran.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cost/planner_index.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

using namespace nubo::cost;
using Clock = std::chrono::steady_clock;

namespace {

int pick(std::mt19937& rng, int n) {
  return static_cast<int>(rng() % static_cast<unsigned>(n));
}

std::string synthetic_catalog(int rows, std::mt19937& rng) {
  const char* gpus[] = {"T4",
                        "A10G",
                        "L4",
                        "L40S",
                        "V100-SXM2-16GB",
                        "V100-SXM2-32GB",
                        "A100-SXM4-40GB",
                        "A100-SXM4-80GB",
                        "A100-PCIE-80GB",
                        "H100-SXM5-80GB",
                        "H100-PCIE-80GB",
                        "H200-SXM-141GB"};
  const char* providers[] = {"aws", "gcp", "azure", "lambda"};
  const int types = 200, regions = std::max(1, rows / types);
  std::ostringstream csv;
  csv << "provider,instance,region,gpu_model,gpus,interconnect,network_gbps,on_demand,spot\n";
  int written = 0;
  for (int t = 0; t < types && written < rows; ++t) {
    std::string gpu = gpus[pick(rng, 12)];
    int count = 1 << (pick(rng, 4));
    bool nvlink = gpu.find("SXM") != std::string::npos;
    std::string ic = count == 1 ? "none" : (nvlink ? "nvswitch" : "pcie");
    int net = 25 << (pick(rng, 8));
    double base = (0.5 + (pick(rng, 100)) / 25.0) * count;
    bool spot = pick(rng, 3) != 0;
    for (int r = 0; r < regions && written < rows; ++r, ++written) {
      double od = base * (0.9 + (pick(rng, 200)) / 1000.0);
      csv << providers[t % 4] << ",type" << t << ",region" << r << "," << gpu << "," << count << ","
          << ic << "," << net << "," << od << ",";
      if (spot) csv << od * (0.15 + (pick(rng, 50)) / 100.0);
      csv << "\n";
    }
  }
  return csv.str();
}

Workload random_workload(std::mt19937& rng) {
  Workload w;
  w.total_flops = std::pow(10.0, 17 + (pick(rng, 300)) / 100.0);
  w.dtype = pick(rng, 2) ? nubo::DType::bf16 : nubo::DType::f16;
  w.mfu = 0.3 + (pick(rng, 20)) / 100.0;
  w.parameter_bytes = std::pow(10.0, 7 + (pick(rng, 300)) / 100.0);
  w.samples = 1e6 + pick(rng, 10000000);
  w.global_batch = 256 << (pick(rng, 4));
  w.memory_per_gpu_bytes = (4 + pick(rng, 80)) * 1e9;
  w.dataset_bytes = (1 + pick(rng, 500)) * 1e9;
  w.checkpoint_bytes = w.parameter_bytes * 3;
  return w;
}

PlanRequest request_for(std::mt19937& rng) {
  PlanRequest r;
  r.pricings = {Pricing::on_demand, Pricing::spot, Pricing::reserved_1y, Pricing::reserved_3y};
  r.max_nodes = 4;
  r.deadline_s = (12 + pick(rng, 100)) * 3600.0;
  r.budget = 1000 + pick(rng, 20000);
  r.limit = 10;
  return r;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  int rows = 10000, workloads = 100, exhaustive = 5;
  unsigned seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    auto value = [&] { return std::atoi(argv[i + 1]); };
    if (!std::strcmp(argv[i], "--rows"))
      rows = value();
    else if (!std::strcmp(argv[i], "--workloads"))
      workloads = value();
    else if (!std::strcmp(argv[i], "--exhaustive-workloads"))
      exhaustive = value();
    else if (!std::strcmp(argv[i], "--seed"))
      seed = static_cast<unsigned>(value());
    else {
      std::fprintf(stderr, "nubo-cost-bench: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (rows < 1 || workloads < 1 || exhaustive < 0) {
    std::fprintf(stderr, "nubo-cost-bench: --rows and --workloads must be >= 1\n");
    return 2;
  }
  try {
    std::mt19937 rng(seed);
    auto t0 = Clock::now();
    auto catalog = Catalog::empty();
    catalog.load_text(synthetic_catalog(rows, rng), "synthetic");
    const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

    std::vector<Workload> ws;
    std::vector<PlanRequest> rs;
    for (int i = 0; i < workloads; ++i) {
      ws.push_back(random_workload(rng));
      rs.push_back(request_for(rng));
    }
    std::vector<double> fast_ms, slow_ms;
    std::size_t options = 0, feasible = 0, mismatches = 0;
    for (int i = 0; i < workloads; ++i) {
      // The best of three runs: the machine is shared, and a context switch in one run is noise.
      Plan p;
      double best = 1e300;
      for (int rep = 0; rep < 3; ++rep) {
        auto a = Clock::now();
        p = plan(catalog, ws[i], rs[i]);
        best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - a).count());
      }
      fast_ms.push_back(best);
      options += p.considered;
      feasible += p.feasible;
      if (i < exhaustive) {
        auto b = Clock::now();
        auto q = nubo::cost::detail::plan_exhaustive(catalog, ws[i], rs[i]);
        slow_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - b).count());
        bool same = p.feasible == q.feasible && p.frontier.size() == q.frontier.size();
        for (std::size_t k = 0; same && k < p.ranked.size(); ++k)
          same = p.ranked[k].total_cost() == q.ranked[k].total_cost();
        if (!same) ++mismatches;
      }
    }
    double fast_total = 0;
    for (double v : fast_ms) fast_total += v;
    const double fast_mean = fast_total / workloads, fast_med = quantile(fast_ms, 0.5);
    const double fast_p90 = quantile(fast_ms, 0.9), fast_max = quantile(fast_ms, 1.0);
    const double slow_med = quantile(slow_ms, 0.5);
    std::printf(
        "Catalog: %d rows (%zu instance shapes), indexed in %.1f ms; %d workloads; "
        "%.0f options per workload (instance x 1-4 nodes x 4 pricings), %.0f feasible\n\n",
        rows, nubo::cost::detail::CostAccess::compiled(catalog)->shapes.size(), load_ms, workloads,
        static_cast<double>(options) / workloads, static_cast<double>(feasible) / workloads);
    std::printf(
        "| planner | workloads | median ms / workload | mean | p90 | max | "
        "time / plan()'s, same workload (median) |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
    std::printf("| plan() (indexed, pruned) | %d | %.3f | %.3f | %.3f | %.3f | 1 |\n", workloads,
                fast_med, fast_mean, fast_p90, fast_max);
    if (!slow_ms.empty()) {
      double slow_total = 0;
      for (double v : slow_ms) slow_total += v;
      // The ratio on the same workloads: the median of slow / fast, workload by workload.
      std::vector<double> ratios;
      for (std::size_t i = 0; i < slow_ms.size(); ++i) ratios.push_back(slow_ms[i] / fast_ms[i]);
      std::printf(
          "| exhaustive reference (every option estimated) | %zu | %.1f | %.1f | %.1f | "
          "%.1f | %.0f |\n",
          slow_ms.size(), slow_med, slow_total / static_cast<double>(slow_ms.size()),
          quantile(slow_ms, 0.9), quantile(slow_ms, 1.0), quantile(ratios, 0.5));
    }
    std::printf("\nTarget: under 1 ms per workload: %s (median %.3f ms).\n",
                fast_med < 1.0 ? "met" : "NOT met", fast_med);
    if (!slow_ms.empty())
      std::printf("Agreement with the exhaustive reference: %zu of %zu workloads identical.\n",
                  slow_ms.size() - mismatches, slow_ms.size());
    return mismatches ? 1 : 0;
  } catch (const nubo::Error& e) {
    std::fprintf(stderr, "nubo-cost-bench: %s\n", e.what());
    return 1;
  }
}
