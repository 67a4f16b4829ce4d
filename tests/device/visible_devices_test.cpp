#include <catch2/catch.hpp>

#include "device/backend/visible_devices.hpp"
#include "sim_helpers.hpp"

using namespace nubo;
using namespace nubo::detail;

namespace {
std::vector<Device> four() {
  return testing::sim_report("4xA100-SXM4-80GB").devices;
}
}  // namespace

TEST_CASE("indices select and reorder devices, as CUDA does") {
  auto v = apply_visible_devices("2,0", four());
  CHECK(v.kept == std::vector<int>{2, 0});
  CHECK(v.diagnoses.empty());
}

TEST_CASE("UUIDs and unique UUID prefixes work, with or without GPU-") {
  auto d = four();
  auto v = apply_visible_devices(d[3].uuid + "," + d[1].uuid.substr(4, 12), d);
  CHECK(v.kept == std::vector<int>{3, 1});
  auto ambiguous = apply_visible_devices("GPU-5e1d", d);
  REQUIRE(ambiguous.diagnoses.size() == 2);
  CHECK_THAT(ambiguous.diagnoses[0].message, Catch::Contains("several devices"));
}

TEST_CASE("an entry naming no device ends the list, with a diagnosis naming it") {
  auto v = apply_visible_devices("1,7,0", four());
  CHECK(v.kept == std::vector<int>{1});
  REQUIRE(v.diagnoses.size() == 1);
  CHECK(v.diagnoses[0].code == "visible-devices-invalid");
  CHECK(v.diagnoses[0].severity == Severity::error);
  CHECK_THAT(v.diagnoses[0].message, Catch::Contains("'7'") && Catch::Contains("'7,0'"));
}

TEST_CASE("hiding every device is reported, and -1 does it without complaint about entries") {
  auto empty = apply_visible_devices("", four());
  CHECK(empty.kept.empty());
  REQUIRE(empty.diagnoses.size() == 1);
  CHECK(empty.diagnoses[0].code == "visible-devices-hide-all");
  auto minus = apply_visible_devices("-1", four());
  REQUIRE(minus.diagnoses.size() == 1);
  CHECK(minus.diagnoses[0].code == "visible-devices-hide-all");
  auto garbage = apply_visible_devices("abc,,", four());
  CHECK(garbage.kept.empty());
  CHECK(garbage.diagnoses[0].code == "visible-devices-invalid");
}

TEST_CASE("repeats and MIG instances are refused") {
  CHECK(apply_visible_devices("0,0", four()).kept == std::vector<int>{0});
  CHECK_THAT(apply_visible_devices("0,0", four()).diagnoses[0].message, Catch::Contains("repeats"));
  CHECK_THAT(apply_visible_devices("MIG-abc", four()).diagnoses[0].message, Catch::Contains("MIG"));
}

TEST_CASE("discover applies CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER to simulated devices") {
  {
    testing::ScopedEnv v("CUDA_VISIBLE_DEVICES", "3,1");
    auto r = testing::sim_report("4xA100-SXM4-80GB");
    REQUIRE(r.devices.size() == 2);
    CHECK(r.devices[0].ordinal == 3);
    CHECK(r.devices[0].index == 0);
    CHECK(r.devices[1].ordinal == 1);
    CHECK(r.links.size() == 2);
  }
  {
    testing::ScopedEnv order("CUDA_DEVICE_ORDER", "FASTEST_FIRST");
    auto r = testing::sim_report("2xT4,1xH100-SXM5-80GB");
    CHECK(r.devices[0].model == "H100-SXM5-80GB");
    CHECK(r.devices[1].model == "T4");
    testing::ScopedEnv v("CUDA_VISIBLE_DEVICES", "0");  // indices follow the order in force
    CHECK(testing::sim_report("2xT4,1xH100-SXM5-80GB").devices[0].model == "H100-SXM5-80GB");
  }
  {
    testing::ScopedEnv order("CUDA_DEVICE_ORDER", "SLOWEST");
    CHECK_THROWS_WITH(testing::sim_report("1xT4"), Catch::Contains("CUDA_DEVICE_ORDER"));
  }
}
