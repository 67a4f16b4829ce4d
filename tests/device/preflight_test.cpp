// The preflight on simulated devices: derated devices ("…:gemm=0.5", "…:pcie=3x8") are flagged,
// exactly those, with the figure that is low; select leaves them out; the report survives JSON.
#include <catch2/catch.hpp>

#include <atomic>

#include "nubo/error.hpp"
#include "nubo/preflight.hpp"
#include "sim_helpers.hpp"

using Catch::Matchers::Contains;
using nubo::device::PreflightOptions;
using nubo::device::PreflightReport;
using nubo::device::Verdict;

namespace {

PreflightOptions fast() {
  PreflightOptions o;
  o.budget_seconds = 1;  // simulated devices are timed by their model: any budget gives the same
  o.host = false;
  return o;
}

const nubo::device::Measurement& figure(const PreflightReport& r, const std::string& check,
                                        int device, int peer = -1) {
  for (const auto& m : r.measurements)
    if (m.check == check && m.device == device && m.peer == peer) return m;
  FAIL("no " << check << " for device " << device);
  throw 0;
}

}  // namespace

TEST_CASE("preflight: healthy simulated GPUs run at what their model should do", "[preflight]") {
  auto report = nubo::testing::sim_report("2xH100-SXM5-80GB");
  auto r = nubo::device::preflight(report, fast());
  CHECK(r.verdict == Verdict::healthy);
  CHECK(r.exit_status() == 0);
  REQUIRE(r.devices.size() == 2);
  for (const char* check : {"gemm-bf16", "gemm-f16", "gemm-tf32", "gemm-f32", "memory-bandwidth",
                            "host-to-device", "device-to-host"}) {
    const auto& m = figure(r, check, 0);
    INFO(check);
    CHECK(m.expected > 0);
    CHECK(m.ratio == Approx(1.0).epsilon(1e-6));
    CHECK(m.verdict == Verdict::healthy);
  }
  // H100 SXM5: 989 TFLOP/s bf16 dense, of which a GEMM reaches about 0.75.
  CHECK(figure(r, "gemm-bf16", 1).expected == Approx(989.4 * 0.75).epsilon(0.01));
  // PCIe Gen5 x16: 63 GB/s per direction, about 0.8 of it.
  CHECK(figure(r, "host-to-device", 0).expected == Approx(63.0 * 0.8).epsilon(0.01));
  const auto& p2p = figure(r, "peer-to-peer", 0, 1);
  CHECK(p2p.ratio == Approx(1.0));
  CHECK_THAT(p2p.basis, Contains("NV18"));
}

TEST_CASE("preflight: a slow GEMM and a link trained down are flagged, exactly those",
          "[preflight]") {
  auto report = nubo::testing::sim_report(
      "2xH100-SXM5-80GB,1xH100-SXM5-80GB:gemm=0.5,1xH100-SXM5-80GB:pcie=3x8");
  auto r = nubo::device::preflight(report, fast());
  CHECK(r.verdict == Verdict::degraded);
  CHECK(r.exit_status() == 4);
  CHECK(r.find(0)->verdict == Verdict::healthy);
  CHECK(r.find(1)->verdict == Verdict::healthy);
  CHECK(r.find(2)->verdict == Verdict::degraded);
  CHECK_THAT(r.find(2)->reason, Contains("gemm-"));
  CHECK_THAT(r.find(2)->reason, Contains("0.50 of expected"));
  CHECK(figure(r, "memory-bandwidth", 2).verdict == Verdict::healthy);
  CHECK(r.find(3)->verdict == Verdict::degraded);
  const auto& h2d = figure(r, "host-to-device", 3);
  // Gen3 x8 (7.9 GB/s) against Gen5 x16 (63 GB/s): an eighth.
  CHECK(h2d.ratio == Approx(0.125).epsilon(0.01));
  CHECK_THAT(h2d.note, Contains("PCIe Gen3 x8"));
  CHECK(figure(r, "gemm-bf16", 3).verdict == Verdict::healthy);

  SECTION("select leaves them out and says why") {
    nubo::SelectRequest request;
    request.count = 2;
    auto excluded = nubo::device::exclude_unhealthy(request, r);
    REQUIRE(excluded.exclude.size() == 2);
    auto group = report.select(excluded);
    REQUIRE(group.size() == 2);
    CHECK(group[0].index == 0);
    CHECK(group[1].index == 1);
    excluded.count = 3;
    try {
      report.select(excluded);
      FAIL("three healthy GPUs were found");
    } catch (const nubo::Error& e) {
      CHECK_THAT(e.what(), Contains("device 3 (NVIDIA H100 80GB HBM3 (simulated)): preflight: "
                                    "degraded, ") &&
                               Contains("PCIe Gen3 x8"));
    }
  }
  SECTION("the JSON report reads back the same") {
    auto back = PreflightReport::from_json(r.to_json(), "check.json");
    CHECK(back.verdict == r.verdict);
    REQUIRE(back.measurements.size() == r.measurements.size());
    CHECK(back.measurements[0].check == r.measurements[0].check);
    CHECK(back.find(3)->reason == r.find(3)->reason);
  }
}

TEST_CASE("preflight: a slow NVLink shows on the pair, not on either GPU", "[preflight]") {
  // Two GPUs of one baseboard, their NVLinks at half rate.
  auto report = nubo::testing::sim_report("2xA100-SXM4-80GB:nvlink=0.5");
  auto r = nubo::device::preflight(report, fast());
  const auto& p2p = figure(r, "peer-to-peer", 0, 1);
  CHECK(p2p.ratio == Approx(0.5));
  CHECK(p2p.verdict == Verdict::degraded);
  CHECK(r.find(0)->verdict == Verdict::healthy);
  CHECK(r.find(1)->verdict == Verdict::healthy);
  CHECK(r.verdict == Verdict::degraded);
  // The ring's all-reduce runs at its slowest hop: half the NVLink rate.
  const auto& ring = figure(r, "all-reduce", -1);
  CHECK(ring.ratio == Approx(0.5));
  CHECK(ring.verdict == Verdict::degraded);
}

TEST_CASE("preflight: the all-reduce of a healthy group is expected at its slowest hop",
          "[preflight]") {
  // 8 H100s on NVSwitch: about 360 GB/s of bus bandwidth (nccl-tests' ring: ~370).
  auto nvswitch = nubo::device::preflight(nubo::testing::sim_report("8xH100-SXM5-80GB"), fast());
  const auto& ring = figure(nvswitch, "all-reduce", -1);
  CHECK(ring.expected == Approx(450 * 0.8));
  CHECK(ring.ratio == Approx(1.0));
  // Two PCIe cards meet at the host bridge: the slower of their links, less the bridge.
  auto pcie = nubo::device::preflight(nubo::testing::sim_report("2xL4"), fast());
  CHECK(figure(pcie, "all-reduce", -1).expected ==
        Approx(figure(pcie, "peer-to-peer", 0, 1).expected));
}

TEST_CASE("preflight: the host is measured, with nothing to compare with", "[preflight]") {
  auto report = nubo::testing::sim_report("1xT4");
  PreflightOptions o = fast();
  o.host = true;
  o.budget_seconds = 2;
  auto r = nubo::device::preflight(report, o);
  const auto& gemm = figure(r, "host-gemm-f32", -1);
  CHECK(gemm.measured > 0);
  CHECK(gemm.expected == 0);
  CHECK(gemm.verdict == Verdict::healthy);
  CHECK(figure(r, "host-memory-bandwidth", -1).measured > 0);
  // The T4 has no bf16 tensor rate in the table: no bf16 figure is expected of it.
  for (const auto& m : r.measurements) CHECK(m.check != "gemm-bf16");
}

TEST_CASE("preflight: bad options and a stop request", "[preflight]") {
  auto report = nubo::testing::sim_report("2xA100-SXM4-80GB");
  PreflightOptions o = fast();
  o.devices = {0, 5};
  CHECK_THROWS_WITH(nubo::device::preflight(report, o), Contains("there is no GPU 5"));
  o.devices = {1, 1};
  CHECK_THROWS_WITH(nubo::device::preflight(report, o), Contains("named twice"));
  o = fast();
  o.threshold = 1.5;
  CHECK_THROWS_WITH(nubo::device::preflight(report, o), Contains("threshold"));
  o = fast();
  std::atomic<int> polls{0};
  o.should_stop = [&] { return ++polls > 3; };
  try {
    nubo::device::preflight(report, o);
    FAIL("the preflight did not stop");
  } catch (const nubo::Error& e) {
    CHECK(e.code() == nubo::Errc::cancelled);
  }
}

TEST_CASE("preflight: a malformed report file is refused, naming the place", "[preflight]") {
  CHECK_THROWS_WITH(PreflightReport::from_json("{", "c.json"), Contains("c.json: not valid JSON"));
  CHECK_THROWS_WITH(PreflightReport::from_json("[]", "c.json"), Contains("c.json: expected"));
  CHECK_THROWS_WITH(PreflightReport::from_json(
                        R"({"verdict":"fine","threshold":0.8,"seconds":1,"devices":[],
                            "measurements":[]})",
                        "c.json"),
                    Contains("'fine' is not healthy"));
  CHECK_THROWS_WITH(PreflightReport::from_json(
                        R"({"verdict":"healthy","threshold":0.8,"seconds":1,"devices":[],
                            "measurements":[{"check":"gemm-bf16","device":0}]})",
                        "c.json"),
                    Contains("c.json.measurements[0]: the field 'measured' is missing"));
}

TEST_CASE("preflight: a report that was edited or crafted is refused, never a crash",
          "[preflight]") {
  // What the report says, healthy; each case changes one thing.
  const auto report = [](const std::string& devices, const std::string& measured,
                         const std::string& ratio, const std::string& extra = "") {
    return R"({"verdict":"healthy","threshold":0.8,"seconds":1,"devices":[)" + devices +
           R"(],"measurements":[{"check":"gemm-bf16","device":0,"measured":)" + measured +
           R"(,"expected":100,"unit":"TFLOP/s","ratio":)" + ratio + R"(,"verdict":"healthy")" +
           extra + "}]}";
  };
  const std::string gpu0 = R"({"device":0,"model":"H100","verdict":"healthy"})";
  CHECK_NOTHROW(PreflightReport::from_json(report(gpu0, "90", "0.9"), "c.json"));
  // A ratio of 1e400 once escaped as std::out_of_range and ended the program.
  CHECK_THROWS_WITH(PreflightReport::from_json(report(gpu0, "90", "1e400"), "c.json"),
                    Contains("c.json: not valid JSON"));
  CHECK_THROWS_WITH(
      PreflightReport::from_json(report(gpu0, "90", "1e300"), "c.json"),
      Contains("c.json.measurements[0].ratio: ") && Contains("is not measured / expected"));
  CHECK_THROWS_WITH(PreflightReport::from_json(report(gpu0 + "," + gpu0, "90", "0.9"), "c.json"),
                    Contains("c.json.devices[1].device: GPU 0 appears twice"));
  CHECK_THROWS_WITH(PreflightReport::from_json(report(gpu0, "90", "0.9", R"(,"note":7)"), "c.json"),
                    Contains("c.json.measurements[0].note: expected a string"));
  CHECK_THROWS_WITH(
      PreflightReport::from_json(report(gpu0, "90", "0.9", R"(,"note":"\u001b[2J")"), "c.json"),
      Contains("holds a control character"));
  CHECK_THROWS_WITH(PreflightReport::from_json(report(gpu0, "\"90\"", "0.9"), "c.json"),
                    Contains("measured: a number is needed"));
  CHECK_THROWS_WITH(
      PreflightReport::from_json(
          R"({"verdict":"healthy","threshold":7,"seconds":1,"devices":[],"measurements":[]})",
          "c.json"),
      Contains("c.json.threshold: a fraction in (0, 1]"));
  CHECK_THROWS_WITH(
      PreflightReport::from_json(
          R"({"verdict":"healthy","verdict":"healthy","threshold":0.8,"seconds":1,"devices":[],"measurements":[]})",
          "c.json"),
      Contains("appears twice"));
}

TEST_CASE("simulated devices: malformed modifiers are refused, naming the entry", "[sim]") {
  for (const char* bad :
       {"1xT4:gemm", "1xT4:gemm=2", "1xT4:pcie=9x16", "1xT4:pcie=3", "1xT4:fast=1"}) {
    INFO(bad);
    CHECK_THROWS_WITH(nubo::testing::sim_report(bad), Contains("simulated devices: entry '"));
  }
  // A derated device is another device: its UUID differs.
  auto plain = nubo::testing::sim_report("1xT4");
  auto slow = nubo::testing::sim_report("1xT4:gemm=0.5");
  CHECK(plain.devices[0].uuid != slow.devices[0].uuid);
}
