// Health scenarios with the real plugin and the fake NVML
// (tests/device/cuda/fakes/fake_nvml_health.c): each CTest entry (tests/device/cuda/CMakeLists.txt)
// gives a scenario file and what nubo must say of it, in HEALTH_EXPECT_* variables. XIDs are
// injected mid-run: the scenario is first read without them (the GPU is healthy), then the XID line
// is appended, as a driver would raise it during a job, and the next read must report it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <chrono>
#include <thread>

#include "nubo/device.hpp"
#include "nubo/health.hpp"
#include "nubo/parallel.hpp"

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

nubo::DeviceReport discover_fakes() {
  nubo::DiscoverOptions options;
  options.sim_devices = "";
  return nubo::discover(options);
}

std::string codes(const nubo::device::HealthReport& r) {
  std::string out;
  for (const auto& f : r.findings) out += f.code + " ";
  return out;
}

}  // namespace

TEST_CASE("health: a scenario gives its finding, status, action and exit status",
          "[.][health-scenario]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("nubo-health-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path scenario = dir / "scenario.txt";
  fs::copy_file(env("HEALTH_SCENARIO"), scenario, fs::copy_options::overwrite_existing);
  ::setenv("FAKE_NVML_SCENARIO", scenario.c_str(), 1);

  auto report = discover_fakes();
  REQUIRE(report.devices.size() == 4);
  nubo::device::HealthOptions options;
  options.kernel_log_file = "/dev/null";  // this machine's kernel log is not the scenario's
  const std::string inject = env("HEALTH_INJECT");
  if (!inject.empty()) {
    auto before = nubo::device::health(report, options);
    INFO("before the XID: " << codes(before));
    CHECK(before.status == nubo::device::HealthStatus::ok);
    std::ofstream(scenario, std::ios::app) << inject << "\n";
  }
  auto r = nubo::device::health(report, options);
  fs::remove_all(dir);
  INFO("findings: " << codes(r) << "\nsource: " << r.source);
  CHECK(r.source == "nvml");
  CHECK(r.gpus.size() == 4);
  const std::string code = env("HEALTH_EXPECT_CODE");
  if (code.empty()) {
    CHECK(r.findings.empty());
    CHECK(r.exit_status() == 0);
    return;
  }
  const nubo::device::Finding* found = nullptr;
  for (const auto& f : r.findings)
    if (f.code == code && !found) found = &f;  // the first: a machine-wide finding is per GPU
  REQUIRE(found != nullptr);
  CHECK(found->device == std::atoi(env("HEALTH_EXPECT_GPU").c_str()));
  CHECK(nubo::device::health_status_name(found->status) == env("HEALTH_EXPECT_STATUS"));
  CHECK(nubo::device::action_name(found->action) == env("HEALTH_EXPECT_ACTION"));
  CHECK(r.exit_status() == std::atoi(env("HEALTH_EXPECT_EXIT").c_str()));
  CHECK_THAT(found->message, Catch::Matchers::Contains(env("HEALTH_EXPECT_MESSAGE")));
}

TEST_CASE("health: a scenario the fake cannot read is NVML failing, said plainly",
          "[.][health-malformed]") {
  auto report = nubo::discover(nubo::DiscoverOptions{
      .sim_devices = "", .sim_topology_file = {}, .probe_cuda = true, .cuda_plugin_path = {}});
  nubo::device::HealthOptions options;
  options.kernel_log_file = "/dev/null";
  auto r = nubo::device::health(report, options);
  CHECK_THAT(r.source, Catch::Matchers::Contains("nvmlInit_v2 failed"));
  CHECK(r.gpus.empty());
  CHECK(r.exit_status() == 0);  // no facts is not a finding; discovery says NVML failed
}

TEST_CASE("health: a team that watches its GPUs fails at once when one of them fails",
          "[.][health-team]") {
  namespace fs = std::filesystem;
  const fs::path scenario =
      fs::temp_directory_path() / ("nubo-health-team-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(scenario) << "# healthy\n";
  ::setenv("FAKE_NVML_SCENARIO", scenario.c_str(), 1);
  // Simulated GPU 0 sits where the fake's GPU 0 does (00000000:10:00.0).
  auto devices = nubo::discover().devices;
  REQUIRE(devices.size() == 2);
  nubo::TeamOptions options;
  options.health_watch_seconds = 0.2;
  nubo::Team team(devices, options);
  std::this_thread::sleep_for(
      std::chrono::milliseconds(500));  // the watch has read the healthy state
  std::ofstream(scenario, std::ios::app) << "gpu 0 xid 79\n";
  const auto start = std::chrono::steady_clock::now();
  try {
    team.run([&](nubo::Worker& w) {
      auto buf = w.alloc(nubo::DType::f32, 1024);
      while (std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) w.all_reduce(buf);
    });
    FAIL("the team went on for 20 s after its GPU failed");
  } catch (const nubo::Error& e) {
    CHECK(e.code() == nubo::Errc::cancelled);
    CHECK_THAT(e.what(), Catch::Matchers::Contains("GPU 0 (00000000:10:00.0) failed: XID 79"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  }
  fs::remove(scenario);
  nubo::TeamOptions bad;
  bad.health_watch_seconds = -1;
  CHECK_THROWS_WITH(nubo::Team(devices, bad), Catch::Matchers::Contains("health_watch_seconds"));
}
