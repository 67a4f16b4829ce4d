#include <catch2/catch.hpp>

#include "cost_helpers.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::cost;

TEST_CASE("the sample profile reads, and predicts a run on other machines") {
  auto p = Profile::load(cost_test::data_path("sample_profile.json"));
  CHECK(p.backend == "cpu");
  CHECK(p.devices == 1);
  CHECK(p.device_peak_tflops == 1.0);
  CHECK(p.dtype == DType::f32);
  CHECK(p.global_batch == 100);
  CHECK(p.compute_time_s == 0.012);
  CHECK(p.allreduce_bytes == 940584);
  CHECK(p.dataset_samples == 60000);
  CHECK(p.checkpoint_bytes == 2821752);
  auto c = cost_test::fixed_catalog();
  auto w = Workload::from_profile(p, 10);  // 6000 steps
  auto e = estimate(c, w, c.get("g4dn.xlarge"), 1, Pricing::on_demand);
  // 0.012 s x 1 x 1.0 TFLOP/s x 6000 steps = 72 TFLOP; a T4 does 8.1 fp32.
  CHECK(e.time.steps == 6000);
  CHECK(e.time.compute_s == Approx(72 / 8.1));
  auto planned = plan(c, w, PlanRequest{});
  CHECK(!planned.ranked.empty());
}

TEST_CASE("a profile survives a round trip through JSON") {
  auto p = Profile::load(cost_test::data_path("sample_profile.json"));
  p.checkpoint_stall_s = 0.125;
  auto q = Profile::parse(p.to_json(), "round trip");
  CHECK(q.device_model == p.device_model);
  CHECK(q.compute_time_s == p.compute_time_s);
  CHECK(q.allreduce_bytes == p.allreduce_bytes);
  CHECK(q.checkpoint_time_s == p.checkpoint_time_s);
  CHECK(q.checkpoint_stall_s == p.checkpoint_stall_s);
  CHECK(q.device_peak_tflops == p.device_peak_tflops);
  // The host fields, which only host workers' profiles have.
  CHECK(q.host_threads == 0);
  p.host_threads = 2;
  p.host_cpus = 8;
  p.gemm_time_s = p.compute_time_s / 2;
  q = Profile::parse(p.to_json(), "round trip");
  CHECK(q.host_threads == 2);
  CHECK(q.host_cpus == 8);
  CHECK(q.gemm_time_s == p.gemm_time_s);
  p.gemm_time_s = p.compute_time_s * 2;
  CHECK_THROWS_WITH(Profile::parse(p.to_json(), "run.json"),
                    Catch::Contains("per_step.gemm_s") && Catch::Contains("is more than"));
}

TEST_CASE("a bad profile is rejected naming the file and the field") {
  auto fails = [](const std::string& json, const std::string& needle) {
    try {
      Profile::parse(json, "run.json");
      FAIL("expected " << needle);
    } catch (const Error& e) {
      CHECK(e.code() == Errc::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains("run.json") && Catch::Contains(needle));
    }
  };
  const std::string ok_devices = R"("devices": {"backend": "cpu", "model": "x", "count": 1})";
  fails("{", "not valid JSON");
  fails(R"({"schema": "nubo-profile/1", "global_batch": 1e400})", "not valid JSON");
  fails("[]", "expected a JSON object");
  fails(R"({"schema": "other/2"})", "schema: 'other/2' is not 'nubo-profile/1'");
  fails(R"({"schema": "nubo-profile/1"})", "devices.backend: missing");
  fails(R"({"schema": "nubo-profile/1", "devices": {"backend": "tpu", "model": "x", "count": 1}})",
        "expected cpu, sim or cuda");
  fails(R"({"schema": "nubo-profile/1", )" + ok_devices + R"(, "dtype": "int4"})", "dtype");
  fails(R"({"schema": "nubo-profile/1", )" + ok_devices +
            R"(, "dtype": "fp32", "global_batch": "big"})",
        "global_batch: expected a number, got string");
  fails(R"({"schema": "nubo-profile/1", )" + ok_devices +
            R"(, "dtype": "fp32", "global_batch": 10, "per_step": {"compute_s": -1}})",
        "per_step.compute_s: out of range");
  CHECK_THROWS_AS(Profile::load("/nonexistent/run.json"), Error);
}
