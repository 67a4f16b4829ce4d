// The planner: the cheapest feasible plan, the Pareto frontier, every exclusion explained, and
// agreement with the exhaustive reference on a random catalog.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <sstream>

#include "cost/planner_index.hpp"
#include "cost_helpers.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/preflight.hpp"

using namespace nubo;
using namespace nubo::cost;
using cost_test::flops_workload;

namespace {

PlanRequest all_pricings(int max_nodes) {
  PlanRequest r;
  r.pricings = {Pricing::on_demand, Pricing::spot, Pricing::reserved_1y, Pricing::reserved_3y};
  r.max_nodes = max_nodes;
  r.limit = 0;
  return r;
}

bool has_reason(const Plan& p, const std::string& needle) {
  for (const auto& x : p.exclusions())
    if (x.reason.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the planner ranks the cheapest feasible plan first") {
  auto c = cost_test::fixed_catalog();
  auto w = flops_workload();
  PlanRequest r;
  r.deadline_s = 24 * 3600;
  r.max_nodes = 4;
  r.limit = 0;
  auto p = plan(c, w, r);
  REQUIRE(!p.ranked.empty());
  for (std::size_t i = 1; i < p.ranked.size(); ++i)
    CHECK(p.ranked[i - 1].total_cost() <= p.ranked[i].total_cost());
  // Checked against every single option estimated directly.
  double cheapest = 1e300;
  for (const auto& in : c.instances())
    for (int n = 1; n <= 4; ++n) {
      try {
        auto e = estimate(c, w, in, n, Pricing::on_demand);
        if (e.time.total_s() <= r.deadline_s && e.memory_needed_bytes <= e.memory_per_gpu_bytes)
          cheapest = std::min(cheapest, e.total_cost());
      } catch (const Error&) {
        // unsupported (no bf16 on V100 and T4): excluded by the planner too
      }
    }
  CHECK(p.ranked.front().total_cost() == Approx(cheapest));
  CHECK(p.considered == p.feasible + p.excluded());
  std::size_t explained = 0;
  for (const auto& x : p.exclusions()) explained += x.options;
  CHECK(explained == p.excluded());  // every exclusion explained
  // By time instead.
  r.rank = PlanRequest::Rank::time;
  auto fast = plan(c, w, r);
  for (std::size_t i = 1; i < fast.ranked.size(); ++i)
    CHECK(fast.ranked[i - 1].time.total_s() <= fast.ranked[i].time.total_s());
}

TEST_CASE("an infeasible deadline is explained for every option") {
  auto c = cost_test::fixed_catalog();
  PlanRequest r;
  r.deadline_s = 60;  // nothing trains 3e18 FLOPs in a minute
  auto p = plan(c, flops_workload(), r);
  CHECK(p.ranked.empty());
  CHECK(p.feasible == 0);
  CHECK(has_reason(p, "past the 60 s deadline"));
  CHECK(has_reason(p, "V100-SXM2-16GB has no bf16 support"));
  CHECK(has_reason(p, "T4 has no bf16 support"));
  for (const auto& x : p.exclusions()) {
    CHECK_FALSE(x.subject.empty());
    CHECK(x.options > 0);
  }
}

TEST_CASE("memory, budget, missing prices and single-node instances are explained") {
  auto c = cost_test::fixed_catalog();
  auto w = flops_workload();
  w.total_flops = 3e20;           // 83 h on one p4de: over a $500 budget
  w.memory_per_gpu_bytes = 60e9;  // more than 40 GB GPUs have
  PlanRequest r = all_pricings(2);
  r.budget = 500;
  auto p = plan(c, w, r);
  CHECK(has_reason(p, "needs 55.9 GiB of GPU memory per GPU; A100-SXM4-40GB has 40.0 GiB"));
  CHECK(has_reason(p, "over the $500.00 budget"));
  CHECK(has_reason(p, "no spot price"));
  for (const auto& e : p.ranked) {
    CHECK(e.total_cost() <= 500);
    CHECK(e.memory_per_gpu_bytes >= 60e9);
  }
  // An instance the catalog gives no network cannot span nodes.
  auto lone = Catalog::empty();
  lone.load_text(
      "provider,instance,region,gpu_model,gpus,on_demand,network_gbps\n"
      "aws,lone,r,A100-SXM4-80GB,1,2,0\n",
      "lone.csv");
  auto q = plan(lone, flops_workload(), all_pricings(3));
  CHECK(has_reason(q, "cannot span nodes"));
  CHECK(q.feasible == 3);  // one node: on-demand, reserved 1y and 3y (no spot price)
}

TEST_CASE("the Pareto frontier: nothing on it is dominated, everything else is") {
  auto c = cost_test::fixed_catalog();
  auto w = flops_workload();
  w.checkpoint_bytes = 20e9;
  auto p = plan(c, w, all_pricings(4));
  REQUIRE(!p.frontier.empty());
  auto dominates = [](const Estimate& a, const Estimate& b) {
    return a.time.total_s() <= b.time.total_s() && a.total_cost() <= b.total_cost() &&
           (a.time.total_s() < b.time.total_s() || a.total_cost() < b.total_cost());
  };
  for (const auto& f : p.frontier) {
    CHECK(f.pareto);
    for (const auto& e : p.ranked) CHECK_FALSE(dominates(e, f));
  }
  for (const auto& e : p.ranked) {
    if (e.pareto) continue;
    bool dominated = false;
    for (const auto& f : p.frontier) dominated = dominated || dominates(f, e);
    CHECK(dominated);
  }
  for (std::size_t i = 1; i < p.frontier.size(); ++i) {
    CHECK(p.frontier[i - 1].time.total_s() <= p.frontier[i].time.total_s());
    CHECK(p.frontier[i - 1].total_cost() >= p.frontier[i].total_cost());
  }
}

TEST_CASE("filters: GPU, provider and region") {
  auto c = cost_test::fixed_catalog();
  PlanRequest r;
  r.gpu = "a100";
  r.limit = 0;
  for (const auto& e : plan(c, flops_workload(), r).ranked)
    CHECK_THAT(e.gpu_model, Catch::Contains("A100"));
  r.gpu.clear();
  r.provider = "azure";
  for (const auto& e : plan(c, flops_workload(), r).ranked) CHECK(e.provider == "azure");
  r.provider.clear();
  r.region = "us-west-2";
  r.pricings = {Pricing::on_demand};
  auto p = plan(c, flops_workload(), r);
  CHECK(p.considered == 1);  // g5.xlarge
}

TEST_CASE("bad plan requests are rejected with the field named") {
  auto c = cost_test::fixed_catalog();
  PlanRequest r;
  r.min_nodes = 0;
  CHECK_THROWS_WITH(plan(c, flops_workload(), r), Catch::Contains("min_nodes"));
  r = {};
  r.max_nodes = 0;
  CHECK_THROWS_WITH(plan(c, flops_workload(), r), Catch::Contains("max_nodes"));
  r = {};
  r.pricings = {};
  CHECK_THROWS_WITH(plan(c, flops_workload(), r), Catch::Contains("at least one pricing"));
  r = {};
  r.pricings = {Pricing::spot, Pricing::spot};
  CHECK_THROWS_WITH(plan(c, flops_workload(), r), Catch::Contains("listed twice"));
  r = {};
  r.budget = -5;
  CHECK_THROWS_WITH(plan(c, flops_workload(), r), Catch::Contains("budget"));
}

TEST_CASE("the planner agrees with the exhaustive reference on a random catalog") {
  // 400 rows over 40 instance types in 10 regions, 3 providers, random prices, some without spot.
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const char* gpus[] = {"T4",
                        "A10G",
                        "L4",
                        "V100-SXM2-16GB",
                        "A100-SXM4-40GB",
                        "A100-SXM4-80GB",
                        "H100-SXM5-80GB",
                        "A100-PCIE-80GB"};
  const char* providers[] = {"aws", "gcp", "azure"};
  std::ostringstream csv;
  csv << "provider,instance,region,gpu_model,gpus,interconnect,network_gbps,on_demand,spot\n";
  for (int t = 0; t < 40; ++t) {
    std::string gpu = gpus[pick(8)];
    int count = 1 << (pick(4));
    bool nvl = gpu.find("SXM") != std::string::npos;
    std::string ic = count == 1 ? "none" : (nvl ? "nvswitch" : "pcie");
    int net = (pick(5) == 0) ? 0 : 25 << (pick(5));
    const char* prov = providers[t % 3];
    double base = (1 + pick(40)) * count * 0.5;
    for (int region = 0; region < 10; ++region) {
      double od = base * (0.9 + 0.02 * (pick(10)));
      // Round prices so that some regions tie exactly.
      od = std::round(od * 4) / 4;
      csv << prov << ",type" << t << ",region" << region << "," << gpu << "," << count << "," << ic
          << "," << net << "," << od << ",";
      if (pick(3)) csv << std::round(od * (0.2 + 0.05 * (pick(8))) * 4) / 4;
      csv << "\n";
    }
  }
  auto c = Catalog::empty();
  c.load_text(csv.str(), "random.csv");
  auto w = flops_workload();
  w.parameter_bytes = 2e9;
  w.samples = 1e6;
  w.global_batch = 512;
  w.checkpoint_bytes = 10e9;
  w.dataset_bytes = 200e9;
  w.memory_per_gpu_bytes = 30e9;
  for (auto rank : {PlanRequest::Rank::cost, PlanRequest::Rank::time}) {
    for (double budget : {0.0, 2000.0}) {
      PlanRequest r = all_pricings(4);
      r.rank = rank;
      r.budget = budget;
      r.deadline_s = 20 * 3600;
      auto fast = plan(c, w, r);
      auto slow = nubo::cost::detail::plan_exhaustive(c, w, r);
      INFO("rank " << static_cast<int>(rank) << " budget " << budget);
      CHECK(fast.considered == slow.considered);
      CHECK(fast.feasible == slow.feasible);
      REQUIRE(fast.ranked.size() == slow.ranked.size());
      for (std::size_t i = 0; i < fast.ranked.size(); ++i) {
        CHECK(fast.ranked[i].label() + fast.ranked[i].region ==
              slow.ranked[i].label() + slow.ranked[i].region);
        CHECK(fast.ranked[i].total_cost() == slow.ranked[i].total_cost());
        CHECK(fast.ranked[i].pareto == slow.ranked[i].pareto);
      }
      REQUIRE(fast.frontier.size() == slow.frontier.size());
      for (std::size_t i = 0; i < fast.frontier.size(); ++i)
        CHECK(fast.frontier[i].label() + fast.frontier[i].region ==
              slow.frontier[i].label() + slow.frontier[i].region);
      // The same exclusions, counted per reason.
      std::array<std::size_t, nubo::cost::detail::kWhys> by{};
      for (const auto& rec : nubo::cost::detail::CostAccess::data(fast)->records)
        by[static_cast<int>(rec.why)] += rec.options;
      CHECK(by == slow.excluded_by);
    }
  }
}

TEST_CASE("a global batch smaller than the GPUs that would share it is refused, saying why") {
  auto c = cost_test::box_catalog();  // 8 GPUs a node
  auto w = flops_workload();
  w.parameter_bytes = 2e9;
  w.samples = 1e5;
  w.global_batch = 12;
  PlanRequest r;
  r.max_nodes = 4;
  auto p = plan(c, w, r);
  REQUIRE_FALSE(p.ranked.empty());
  for (const auto& e : p.ranked) CHECK(e.nodes == 1);  // 8 GPUs take 12 samples; 16 do not
  std::string reasons;
  for (const auto& x : p.exclusions()) reasons += x.subject + ": " + x.reason + "\n";
  CHECK_THAT(reasons, Catch::Contains("x2-4") &&
                          Catch::Contains("its 16 GPUs outnumber the global batch of 12") &&
                          Catch::Contains("--batch"));
  auto slow = nubo::cost::detail::plan_exhaustive(c, w, r);
  // Two regions on 2, 3 and 4 nodes, on demand: six options, in both planners.
  CHECK(slow.excluded_by[static_cast<int>(nubo::cost::detail::Why::batch)] == 6);
  CHECK(slow.feasible == p.feasible);
  auto e = estimate(c, w, c.get("box", "r1"), 2, Pricing::on_demand, r);
  std::string notes;
  for (const auto& n : e.notes) notes += n + "\n";
  CHECK_THAT(notes, Catch::Contains("cannot run as asked: its 16 GPUs outnumber"));
}

TEST_CASE("a plan as JSON holds the ranked plans, the frontier and the exclusions") {
  auto p = plan(cost_test::fixed_catalog(), flops_workload(), all_pricings(2));
  auto json = p.to_json();
  CHECK_THAT(json, Catch::Contains("\"ranked\"") && Catch::Contains("\"frontier\"") &&
                       Catch::Contains("\"exclusions\"") && Catch::Contains("\"time_s\"") &&
                       Catch::Contains("\"rework\"") && Catch::Contains("fixed_instances.csv"));
}

TEST_CASE("Catalog() is the built-in catalog, and planning over no instances says so") {
  // Python's Catalog() has always been the built-in one; C++'s was empty, and a plan over it
  // silently considered nothing.
  CHECK(Catalog().instances().size() == Catalog::builtin().instances().size());
  CHECK_FALSE(Catalog().instances().empty());
  try {
    plan(Catalog::empty(), flops_workload(), all_pricings(1));
    FAIL("planned over an empty catalog");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("no instances") && Catch::Contains("builtin()"));
  }
}

TEST_CASE("a preflight's measured rates price a slow GPU model at what it did") {
  // A preflight of 2 simulated A100s, the second at half its GEMM rate: the model's median is
  // 0.75 of expected; the links measured healthy.
  auto report = nubo::discover(
      nubo::DiscoverOptions{.sim_devices = "1xA100-SXM4-80GB,1xA100-SXM4-80GB:gemm=0.5",
                            .sim_topology_file = {},
                            .probe_cuda = false,
                            .cuda_plugin_path = {}});
  nubo::device::PreflightOptions o;
  o.budget_seconds = 1;
  o.host = false;
  const auto check = nubo::device::preflight(report, o);
  const auto rates = measured_rates(check, nubo::DType::bf16, "check.json");
  REQUIRE(rates.size() == 1);
  CHECK(rates[0].gpu_model == "A100-SXM4-80GB");
  CHECK(rates[0].compute == Approx(0.75));
  CHECK(rates[0].link == Approx(1.0));

  auto c = cost_test::box_catalog();
  auto w = flops_workload();
  const auto table = estimate(c, w, c.instances()[0], 1, Pricing::on_demand);
  PlanRequest r;
  r.measured = rates;
  const auto measured = estimate(c, w, c.instances()[0], 1, Pricing::on_demand, r);
  CHECK(measured.time.compute_s == Approx(table.time.compute_s / 0.75));
  bool said = false;
  for (const auto& n : measured.notes)
    said |= n.find("as the preflight measured them (check.json)") != std::string::npos;
  CHECK(said);
  const auto p = plan(c, w, r);
  REQUIRE_FALSE(p.ranked.empty());
  CHECK(p.ranked.front().time.compute_s == Approx(table.time.compute_s / 0.75));

  // Rates from a healthy GPU never make it faster than the table.
  auto healthy = nubo::discover(nubo::DiscoverOptions{.sim_devices = "1xA100-SXM4-80GB",
                                                      .sim_topology_file = {},
                                                      .probe_cuda = false,
                                                      .cuda_plugin_path = {}});
  const auto fine =
      measured_rates(nubo::device::preflight(healthy, o), nubo::DType::bf16, "ok.json");
  REQUIRE(fine.size() == 1);
  CHECK(fine[0].compute == Approx(1.0));
  CHECK_THROWS_WITH(nubo::device::PreflightReport::from_json("{}", "bad.json"),
                    Catch::Contains("bad.json"));
  CHECK_THROWS_WITH(nubo::device::PreflightReport::load("/no/such/check.json"),
                    Catch::Contains("/no/such/check.json"));
  r.measured[0].compute = 0;
  CHECK_THROWS_WITH(plan(c, w, r), Catch::Contains("measured rates of A100-SXM4-80GB"));
}
