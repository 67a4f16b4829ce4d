// Shared fixtures of the cost tests: small catalogs and workloads with round numbers, so every
// expected figure can be worked out by hand in the test that uses it.
#pragma once

#include <string>

#include "nubo/cost.hpp"

namespace cost_test {

// A catalog of one instance type, "box", with on-demand 10 $/h and spot 1 $/h (the seed's "spot
// at 10% of on-demand"), 8 A100-SXM4-80GB over NVSwitch, 400 Gb/s network, in two regions.
inline nubo::cost::Catalog box_catalog() {
  auto c = nubo::cost::Catalog::empty();
  c.load_text(
      "provider,instance,region,gpu_model,gpus,interconnect,vcpus,memory_gib,network_gbps,"
      "on_demand,spot\n"
      "aws,box,r1,A100-SXM4-80GB,8,nvswitch,96,1152,400,10,1\n"
      "aws,box,r2,A100-SXM4-80GB,8,nvswitch,96,1152,400,12,\n",
      "box.csv");
  return c;
}

// 3e18 FLOPs in bf16 at 40% MFU: 7.5e6 TFLOP of work at peak.
inline nubo::cost::Workload flops_workload() {
  nubo::cost::Workload w;
  w.total_flops = 3e18;
  w.dtype = nubo::DType::bf16;
  w.mfu = 0.4;
  return w;
}

inline std::string data_path(const std::string& name) {
  return std::string(NUBO_COST_DATA_DIR) + "/" + name;
}

// A fixed catalog of 16 AWS, Azure and GCP instances (tests/cost/fixed_instances.csv) with the
// built-in provider prices: what tests of the planner's arithmetic run on, so they do not move
// when the embedded snapshot is refreshed.
inline nubo::cost::Catalog fixed_catalog() {
  auto c = nubo::cost::Catalog::empty();
  c.load_file(data_path("fixed_instances.csv"));
  return c;
}

}  // namespace cost_test
