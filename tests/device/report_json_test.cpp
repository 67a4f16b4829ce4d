#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "nubo/error.hpp"
#include "sim_helpers.hpp"

using namespace nubo;

TEST_CASE(
    "the report's JSON holds the host, the driver, the devices, the topology, the diagnoses") {
  auto r = testing::sim_report("2xA100-SXM4-80GB,1xT4");
  auto j = nlohmann::json::parse(r.to_json());
  CHECK(j["schema"] == "nubo.device-report/1");
  CHECK(j["host"]["logical_cores"].get<int>() >= 1);
  CHECK(j["host"]["memory_total"].get<std::uint64_t>() > 0);
  CHECK_THAT(j["host"]["blas"].get<std::string>(), Catch::Contains("OpenBLAS"));
  REQUIRE(j["devices"].size() == 3);
  auto d0 = j["devices"][0];
  CHECK(d0["backend"] == "sim");
  CHECK(d0["model"] == "A100-SXM4-80GB");
  CHECK(d0["compute_capability"] == "8.0");
  CHECK(d0["peak_tflops"]["bf16"].get<double>() == Approx(312));
  CHECK(d0["peak_source"] == "catalog");
  CHECK(j["topology"]["links"][0][1] == "NV12");
  CHECK(j["topology"]["links"][0][2] == "PHB");
  CHECK(j["topology"]["peer_access"][0][1] == true);
  CHECK(j["driver"]["loaded"] == false);
  REQUIRE(j["diagnoses"].size() == 1);
  CHECK(j["diagnoses"][0]["code"] == "sim-devices");
  CHECK(j["diagnoses"][0]["severity"] == "info");
}

TEST_CASE("the host CPU is always in the report") {
  DiscoverOptions o;
  o.probe_cuda = false;
  o.sim_devices = "";
  auto r = discover(o);
  CHECK_FALSE(r.has_gpu());
  CHECK(r.host.logical_cores >= 1);
  CHECK(r.host.physical_cores >= 1);
  CHECK_FALSE(r.host.model.empty());
  auto h = r.host_device();
  CHECK(h.backend == Backend::host);
  CHECK(h.memory_total == r.host.memory_total);
}

TEST_CASE("link() checks its indices") {
  auto r = testing::sim_report("2xT4");
  CHECK(r.link(0, 1).name() == "PHB");
  CHECK_THROWS_AS(r.link(0, 2), Error);
  CHECK_THROWS_WITH(r.link(-1, 0), Catch::Contains("there are 2 devices"));
}

TEST_CASE("a bad NUBO_LOG makes discover fail with a clear error") {
  testing::ScopedEnv e("NUBO_LOG", "chatty");
  CHECK_THROWS_WITH(testing::sim_report("1xT4"), Catch::Contains("NUBO_LOG='chatty'"));
}
