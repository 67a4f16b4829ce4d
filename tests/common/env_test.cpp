#include <catch2/catch.hpp>
#include <cstdlib>

#include "common/env.hpp"
#include "nubo/error.hpp"
#include "scoped_env.hpp"

using namespace nubo;

namespace {
using nubo_test::ScopedEnv;
}  // namespace

TEST_CASE("NUBO_LOG accepts the four levels in any case") {
  {
    ScopedEnv e("NUBO_LOG", "DEBUG");
    CHECK(env::log_level() == env::LogLevel::debug);
  }
  {
    ScopedEnv e("NUBO_LOG", "error");
    CHECK(env::log_level() == env::LogLevel::error);
  }
  ::unsetenv("NUBO_LOG");
  CHECK(env::log_level() == env::LogLevel::warn);
}

TEST_CASE("a bad NUBO_LOG names the variable and what it accepts") {
  ScopedEnv e("NUBO_LOG", "loud");
  CHECK_THROWS_WITH(env::log_level(), Catch::Contains("NUBO_LOG='loud'") &&
                                          Catch::Contains("error, warn, info or debug"));
}

TEST_CASE("CUDA_DEVICE_ORDER defaults to PCI bus order and rejects unknown orders") {
  ::unsetenv("CUDA_DEVICE_ORDER");
  CHECK(env::cuda_device_order() == env::DeviceOrder::pci_bus_id);
  ScopedEnv e("CUDA_DEVICE_ORDER", "FASTEST_FIRST");
  CHECK(env::cuda_device_order() == env::DeviceOrder::fastest_first);
  ScopedEnv bad("CUDA_DEVICE_ORDER", "RANDOM");
  CHECK_THROWS_WITH(env::cuda_device_order(), Catch::Contains("PCI_BUS_ID or FASTEST_FIRST"));
}

TEST_CASE("NUBO_CUDA is 0 or 1") {
  ScopedEnv e("NUBO_CUDA", "0");
  CHECK_FALSE(env::cuda_enabled());
  ScopedEnv bad("NUBO_CUDA", "yes");
  CHECK_THROWS_WITH(env::cuda_enabled(), Catch::Contains("NUBO_CUDA='yes'"));
}

TEST_CASE("empty NUBO_SIM_DEVICES means none") {
  ScopedEnv e("NUBO_SIM_DEVICES", "  ");
  CHECK_FALSE(env::sim_devices().has_value());
}
