// nubo::devices_from_spec, the one reader of "cpu:N", "sim:N" and "cuda:I,J" (nubo-train's
// --devices, the C and Python trainers' `devices`): what each names, that it leaves the
// environment alone, and every malformed spec refused naming the spec and its source.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "nubo/device.hpp"
#include "nubo/error.hpp"
#include "scoped_env.hpp"

using nubo_test::ScopedEnv;

TEST_CASE("a device spec names CPU workers, simulated GPUs or CUDA ordinals") {
  ScopedEnv sim("NUBO_SIM_DEVICES", nullptr), cuda("NUBO_CUDA", "0");
  const auto cpus = nubo::devices_from_spec("cpu:3");
  REQUIRE(cpus.size() == 3);
  CHECK(cpus[0].backend == nubo::Backend::host);
  CHECK(nubo::devices_from_spec("cpu").size() == 1);
  const auto sims = nubo::devices_from_spec("sim:2");
  REQUIRE(sims.size() == 2);
  CHECK(sims[1].backend == nubo::Backend::sim);
  CHECK(std::getenv("NUBO_SIM_DEVICES") == nullptr);  // asked of discovery, not set
  // Without a GPU, the empty spec is one CPU worker.
  const auto fallback = nubo::devices_from_spec("");
  REQUIRE(fallback.size() == 1);
  CHECK(fallback[0].backend == nubo::Backend::host);
}

TEST_CASE("NUBO_SIM_DEVICES' devices come first, and a spec asking for more is refused") {
  ScopedEnv sim("NUBO_SIM_DEVICES", "2xH100-SXM5-80GB"), cuda("NUBO_CUDA", "0");
  CHECK(nubo::devices_from_spec("sim:2")[0].name.find("H100") != std::string::npos);
  CHECK_THROWS_WITH(nubo::devices_from_spec("sim:3", "--devices"),
                    Catch::Contains("--devices 'sim:3': only 2 simulated GPUs"));
}

TEST_CASE("malformed device specs are refused, naming the spec and where it came from") {
  ScopedEnv cuda("NUBO_CUDA", "0");
  for (const auto& [spec, why] : std::vector<std::pair<std::string, std::string>>{
           {"gpu", "unknown kind 'gpu'"},
           {"cpu:0", "the count must lie in 1 .. 256"},
           {"cpu:257", "the count must lie in 1 .. 256"},
           {"cpu:", "nothing after ':'"},
           {"cpu:x", "'x' is not a number"},
           {"cpu:-1", "'-1' is not a number"},
           {"sim:99999", "'99999' is not a number"},
           {"cuda:", "nothing after ':'"},
           {"cuda:,", "'' is not a number"},
           {"cuda:7", "there is no CUDA device 7"},
           {"cuda:256", "a CUDA ordinal lies in 0 .. 255"}}) {
    CAPTURE(spec);
    nubo::Errc code{};
    std::string message;
    try {
      nubo::devices_from_spec(spec, "options->devices");
    } catch (const nubo::Error& e) {
      code = e.code();
      message = e.what();
    }
    CHECK(code == nubo::Errc::invalid_argument);
    CHECK_THAT(message, Catch::Contains("options->devices '" + spec + "': " + why) &&
                            Catch::Contains("cpu, cpu:N, sim:N or cuda:I"));
  }
}
