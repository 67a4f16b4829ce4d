// The time model, each term checked against a hand computation.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "cost/efficiency.hpp"
#include "cost/model.hpp"
#include "cost/workload_table.hpp"
#include "cost_helpers.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::cost;
using cost_test::box_catalog;
using cost_test::flops_workload;

TEST_CASE("compute time: FLOPs / (GPUs x peak x MFU)") {
  auto c = box_catalog();
  auto w = flops_workload();
  const auto& box = c.get("box", "r1");
  // 3e18 / (8 x 312e12 x 0.4) = 3004.8 s on one box; half on two.
  CHECK(estimate(c, w, box, 1, Pricing::on_demand).time.compute_s == Approx(3004.8077));
  CHECK(estimate(c, w, box, 2, Pricing::on_demand).time.compute_s == Approx(1502.4038));
  // fp32 on the same GPUs: 19.5 TFLOP/s instead of 312.
  w.dtype = DType::f32;
  CHECK(estimate(c, w, box, 1, Pricing::on_demand).time.compute_s ==
        Approx(3e18 / (8 * 19.5e12 * 0.4)));
  // FLOPs per sample x samples x epochs is the same thing.
  Workload per_sample;
  per_sample.flops_per_sample = 1e12;
  per_sample.samples = 1e6;
  per_sample.epochs = 3;
  per_sample.dtype = DType::bf16;
  CHECK(estimate(c, per_sample, box, 1, Pricing::on_demand).time.compute_s == Approx(3004.8077));
}

TEST_CASE("communication: ring all-reduce 2(n-1)/n x bytes / link, plus the network across nodes") {
  auto c = box_catalog();
  auto w = flops_workload();
  w.parameter_bytes = 1e9;
  w.samples = 1e6;
  w.global_batch = 1000;  // 1000 steps
  w.overlap = 0;          // none of it hidden, to see all of it
  const auto& box = c.get("box", "r1");
  // One node: 2 x 7/8 x 1e9 B / 300 GB/s (A100 NVLink 600 GB/s both ways) = 5.8333 ms a step.
  auto one = estimate(c, w, box, 1, Pricing::on_demand);
  CHECK(one.time.steps == 1000);
  CHECK(one.time.communication_s == Approx(1000 * 2 * 7.0 / 8 * 1e9 / 300e9));
  // Two nodes add 2 x 1/2 x 1e9 B / (400 Gb/s = 50 GB/s) = 20 ms a step.
  auto two = estimate(c, w, box, 2, Pricing::on_demand);
  CHECK(two.time.communication_s == Approx(1000 * (2 * 7.0 / 8 * 1e9 / 300e9 + 1e9 / 50e9)));
  // Half of it hidden behind compute.
  w.overlap = 0.5;
  CHECK(estimate(c, w, box, 2, Pricing::on_demand).time.communication_s ==
        Approx(two.time.communication_s / 2));
  // By default it runs behind the backward pass (2/3 of a step's compute, 3.0048 s a step here):
  // 25.8 ms is hidden whole; 25.8 s would leave all but 2.0032 s exposed.
  w.overlap = -1;
  CHECK(estimate(c, w, box, 2, Pricing::on_demand).time.communication_s == 0);
  w.parameter_bytes = 1e12;
  const auto big = estimate(c, w, box, 2, Pricing::on_demand);
  const double step_comm = 2 * 7.0 / 8 * 1e12 / 300e9 + 1e12 / 50e9;
  CHECK(big.time.communication_s == Approx(1000 * (step_comm - big.time.compute_s / 1000 * 2 / 3)));
  w.parameter_bytes = 1e9;
  // A lower achieved bandwidth.
  PlanRequest slow;
  slow.comm_efficiency = 0.5;
  w.overlap = 0;
  CHECK(estimate(c, w, box, 1, Pricing::on_demand, slow).time.communication_s ==
        Approx(2 * one.time.communication_s));
  // By tokens: a sample is seq_len tokens, 2048 when not given (as the activation estimate).
  auto by_tokens = flops_workload();
  by_tokens.parameter_bytes = 1e9;
  by_tokens.tokens = 2048e6;
  by_tokens.global_batch = 1000;
  CHECK(estimate(c, by_tokens, box, 1, Pricing::on_demand).time.steps == Approx(1000));
  by_tokens.sequence_length = 4096;
  CHECK(estimate(c, by_tokens, box, 1, Pricing::on_demand).time.steps == Approx(500));
  // Without a step count the bytes cannot be turned into time, and the estimate says so.
  w.global_batch = 0;
  auto unknown = estimate(c, w, box, 1, Pricing::on_demand);
  CHECK(unknown.time.communication_s == 0);
  bool said = false;
  for (const auto& n : unknown.notes)
    said = said || (n.find("communication between its 8 GPUs not modelled") != std::string::npos &&
                    n.find("--batch") != std::string::npos);
  CHECK(said);
}

TEST_CASE("staging: compressed dataset / the slower of disk and network") {
  auto c = box_catalog();
  auto w = flops_workload();
  w.dataset_bytes = 100e9;
  w.compression_ratio = 0.5;
  // 50 GB at gp3's 125 MB/s (the network's 50 GB/s is faster) = 400 s.
  CHECK(estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand).time.staging_s == Approx(400));
}

TEST_CASE("checkpoints on on-demand: one write every interval") {
  auto c = box_catalog();
  auto w = flops_workload();  // 3004.8 s of compute
  w.checkpoint_bytes = 10e9;  // 80 s at 125 MB/s
  w.checkpoint_interval_s = 600;
  // floor(3004.8 / 600) = 5 checkpoints of 80 s.
  CHECK(estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand).time.checkpoint_s == Approx(400));
  w.checkpoint_write_mbps = 1000;  // 10 s each
  CHECK(estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand).time.checkpoint_s == Approx(50));
}

TEST_CASE("memory: a job that does not fit is flagged") {
  auto c = box_catalog();
  auto w = flops_workload();
  w.memory_per_gpu_bytes = 100e9;  // A100 80GB has 85.9e9 bytes
  auto e = estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand);
  CHECK(e.memory_needed_bytes > e.memory_per_gpu_bytes);
  bool said = false;
  for (const auto& n : e.notes) said = said || n.find("does not fit") != std::string::npos;
  CHECK(said);
}

TEST_CASE("a measured profile scales by peak: compute x devices x measured peak / target peak") {
  auto c = cost_test::fixed_catalog();
  Profile p;
  p.backend = "cpu";
  p.device_model = "test CPU";
  p.device_peak_tflops = 1.0;
  p.dtype = DType::f32;
  p.devices = 1;
  p.global_batch = 100;
  p.compute_time_s = 0.1;
  p.dataset_samples = 10000;
  p.allreduce_bytes = 4e6;
  auto w = Workload::from_profile(p, 2);  // 200 steps
  w.overlap = 0;                          // all of it exposed, to check it
  // 0.1 s x 1 device x 1 TFLOP/s x 200 steps = 20 TFLOP; a V100 does 15.7 fp32.
  auto one = estimate(c, w, c.get("p3.2xlarge"), 1, Pricing::on_demand);
  CHECK(one.time.steps == 200);
  CHECK(one.time.compute_s == Approx(20 / 15.7));
  CHECK(one.time.communication_s == 0);  // one GPU: nothing to all-reduce with
  // Four V100s over NVLink (300 GB/s / 2 per direction): 2 x 3/4 x 4e6 / 150e9 a step.
  auto four = estimate(c, w, c.get("p3.8xlarge"), 1, Pricing::on_demand);
  CHECK(four.time.compute_s == Approx(20 / (4 * 15.7)));
  CHECK(four.time.communication_s == Approx(200 * 2 * 0.75 * 4e6 / 150e9));
  // A device without a known peak cannot be scaled.
  p.device_peak_tflops = 0;
  CHECK_THROWS_WITH(
      estimate(c, Workload::from_profile(p, 2), c.get("p3.2xlarge"), 1, Pricing::on_demand),
      Catch::Contains("has no known f32 peak"));
  // Simulated GPUs run on host threads: their times predict nothing about a GPU.
  p.device_peak_tflops = 1.0;
  p.backend = "sim";
  p.device_model = "A100-SXM4-80GB";
  p.source = "sim.json";
  CHECK_THROWS_WITH(
      estimate(c, Workload::from_profile(p, 2), c.get("p3.2xlarge"), 1, Pricing::on_demand),
      Catch::Contains("profile sim.json was measured on simulated A100-SXM4-80GB devices"));
}

TEST_CASE("the breakdown adds up to the total, and the cost to hours x price x nodes") {
  auto c = box_catalog();
  auto w = flops_workload();
  w.dataset_bytes = 50e9;
  w.checkpoint_bytes = 5e9;
  w.egress_bytes = 1e12;
  w.storage_months_after = 2;
  auto e = estimate(c, w, c.get("box", "r1"), 2, Pricing::spot);
  const auto& t = e.time;
  CHECK(t.total_s() == Approx(t.compute_s + t.communication_s + t.staging_s + t.checkpoint_s +
                              t.rework_s + t.restart_s));
  CHECK(e.cost.instances == Approx(t.total_s() / 3600 * 2 * 1.0));
  // Block storage on both nodes during the run: (50 + 2 x 5) GB x 0.08 $/GB-month x months x 2.
  CHECK(e.cost.storage == Approx(60 * 0.08 * t.total_s() / 3600 / 730 * 2 + 55 * 0.023 * 2));
  CHECK(e.cost.egress == Approx(1000 * 0.09));
  CHECK(e.total_cost() == Approx(e.cost.instances + e.cost.storage + e.cost.egress));
}

TEST_CASE("bad workloads are rejected with the field named") {
  auto c = box_catalog();
  Workload none;
  CHECK_THROWS_WITH(estimate(c, none, c.get("box", "r1"), 1, Pricing::on_demand),
                    Catch::Contains("total_flops"));
  auto w = flops_workload();
  w.mfu = 1.5;
  CHECK_THROWS_WITH(estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand),
                    Catch::Contains("mfu is 1.5"));
  w = flops_workload();
  w.overlap = -2;  // -1 is the default: behind backward
  CHECK_THROWS_WITH(estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand),
                    Catch::Contains("overlap"));
  // No spot price in r2.
  CHECK_THROWS_AS(estimate(c, flops_workload(), c.get("box", "r2"), 1, Pricing::spot), Error);
  // V100 has no bf16.
  auto b = cost_test::fixed_catalog();
  CHECK_THROWS_WITH(estimate(b, flops_workload(), b.get("p3.2xlarge"), 1, Pricing::on_demand),
                    Catch::Contains("no bf16"));
}

TEST_CASE("scaling on a host: more workers share the cores their GEMMs already used") {
  Profile p;
  p.backend = "cpu";
  p.device_model = "test CPU";
  p.source = "one.json";
  p.devices = 1;
  p.host_threads = 2;
  p.host_cpus = 2;
  p.global_batch = 256;
  p.steps = 100;
  p.compute_time_s = 0.002;
  p.gemm_time_s = 0.0012;
  p.allreduce_bytes = 1e6;
  // 2 workers: one GEMM thread each for half the rows (no gain), the rest halves.
  HostScaleRequest r;
  r.workers = 2;
  auto two = scale_on_host(p, r);
  CHECK(two.threads_per_worker == 1);
  CHECK(two.gemm_s == Approx(0.0012));
  CHECK(two.compute_s == Approx(0.0012 + 0.0004));
  CHECK(two.communication_s == Approx(1e6 / 10e9));
  CHECK(two.step_s == Approx(two.compute_s + two.communication_s));
  CHECK(two.samples_per_s == Approx(256 / two.step_s));
  CHECK(two.run_s == Approx(100 * two.step_s));
  // On 8 CPUs, 4 workers get 2 threads each: as many as the profile's worker had.
  r.workers = 4;
  r.cpus = 8;
  CHECK(scale_on_host(p, r).gemm_s == Approx(0.0012 / 4));
  // 4 workers on the profile's 2 CPUs take turns.
  r.cpus = 0;
  CHECK(scale_on_host(p, r).compute_s == Approx((0.0012 * 0.25 * 2 + 0.0008 * 0.25) * 2));
  // What cannot be scaled says why.
  r.workers = 3;
  r.processes = 2;
  CHECK_THROWS_WITH(scale_on_host(p, r), Catch::Contains("multiple of processes"));
  p.gemm_time_s = 0;
  r.processes = 1;
  CHECK_THROWS_WITH(scale_on_host(p, r), Catch::Contains("lacks devices.host_threads"));
  p.backend = "cuda";
  CHECK_THROWS_WITH(scale_on_host(p, r), Catch::Contains("measured on GPUs"));
}

TEST_CASE("a workload field has one range: its text and the model refuse the same values") {
  auto c = box_catalog();
  // Once the parser took a micro-batch of 2e6 that the model refused, and the model a
  // sequence length of 0.5 the parser refused.
  for (const auto& f : cost::detail::workload_field_table()) {
    INFO(f.member);
    if (f.flag.empty() || f.text != cost::detail::FieldText::number) continue;
    char too_big[32];
    std::snprintf(too_big, sizeof too_big, "%g", f.max * 10 + 1);
    std::map<std::string, std::string> fields{{"flops", "1e18"}};
    fields[std::string(f.flag)] = too_big;
    CHECK_THROWS_AS(workload_from_fields(fields, "--"), Error);
    auto w = flops_workload();
    w.*f.value = f.max * 10 + 1;
    CHECK_THROWS_WITH(estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand),
                      Catch::Contains(std::string(f.member)));
  }
  CHECK_THROWS_WITH(workload_from_fields({{"flops", "1e18"}, {"micro-batch", "2e6"}}, "--"),
                    Catch::Contains("--micro-batch"));
  auto w = flops_workload();
  w.micro_batch = 2e6;
  CHECK_THROWS_WITH(estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand),
                    Catch::Contains("micro_batch is 2e+06; it must lie in [1, 1e+06]"));
  w = flops_workload();
  w.sequence_length = 0.5;
  CHECK_THROWS_WITH(estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand),
                    Catch::Contains("sequence_length is 0.5"));
  // 0 is "not given" in code, but given as text it is a value, and out of range.
  CHECK_THROWS_WITH(workload_from_fields({{"params", "0"}, {"tokens", "1e9"}}, "--"),
                    Catch::Contains("--params: parameters is 0; it must lie in [1, 1e+16]"));
  CHECK_NOTHROW(workload_from_fields({{"params", "7B"},
                                      {"tokens", "1e9"},
                                      {"seq-len", "4096"},
                                      {"micro-batch", "8"},
                                      {"keep-months", "3"}},
                                     "--"));
  CHECK_THROWS_WITH(workload_from_fields({{"parms", "7B"}}, "--"),
                    Catch::Contains("--parms: not a workload field (known: ") &&
                        Catch::Contains("micro-batch") && Catch::Contains("zero"));
}

TEST_CASE("efficiency: calibrated by architecture and model size unless pinned") {
  using nubo::cost::detail::model_flops_utilisation;
  const auto& gpus = nubo::detail::GpuCatalog::builtin();
  const auto& a100 = gpus.get("A100-SXM4-80GB");
  const auto& h100 = gpus.get("H100-SXM5-80GB");
  // m h / (h + h_half): Ampere 0.45, 400; Hopper 0.60, 11000 (efficiency.cpp's fit).
  CHECK(model_flops_utilisation(a100, 4096) == Approx(0.45 * 4096 / 4496));
  CHECK(model_flops_utilisation(h100, 4096) == Approx(0.60 * 4096 / 15096));
  CHECK(model_flops_utilisation(h100, 16384) > model_flops_utilisation(h100, 4096));
  CHECK(model_flops_utilisation(gpus.get("B200-SXM-180GB"), 8192) ==
        Approx(model_flops_utilisation(h100, 8192)));  // Blackwell takes Hopper's
  auto c = box_catalog();                              // A100-SXM4-80GB
  Workload w;
  w.parameters = 7e9;
  w.tokens = 1e9;
  const auto e = estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand);
  std::string notes;
  for (const auto& n : e.notes) notes += n + "\n";
  CHECK_THAT(notes, Catch::Contains("of peak for a hidden size of") &&
                        Catch::Contains("calibrated on published Ampere runs"));
  w.mfu = 0.5;  // pinned: used as given, and no calibration note
  const auto pinned = estimate(c, w, c.get("box", "r1"), 1, Pricing::on_demand);
  CHECK(pinned.time.compute_s == Approx(6 * 7e9 * 1e9 / (8 * 312e12 * 0.5)));
  for (const auto& n : pinned.notes) CHECK(n.find("calibrated on") == std::string::npos);
  // FLOPs alone: the typical 40%.
  Workload flops;
  flops.total_flops = 3e18;
  CHECK(estimate(c, flops, c.get("box", "r1"), 1, Pricing::on_demand).time.compute_s ==
        Approx(3e18 / (8 * 312e12 * 0.4)));
}
