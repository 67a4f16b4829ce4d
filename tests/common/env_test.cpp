#include <catch2/catch.hpp>
#include <cstdlib>

#include "common/env.hpp"
#include "nubo/env.hpp"
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

TEST_CASE("the object stores' variables are read once, checked with the others") {
  {
    ScopedEnv t("NUBO_S3_TIMEOUT", "2.5"), e("NUBO_GS_ENDPOINT_URL", "http://127.0.0.1:9000/");
    CHECK(env::store_timeout_s() == 2.5);
    CHECK(env::gs_endpoint() == "http://127.0.0.1:9000");  // without its trailing '/'
    CHECK_NOTHROW(check_environment());
  }
  for (const char* bad : {"0", "-1", "4000", "soon"}) {
    ScopedEnv t("NUBO_S3_TIMEOUT", bad);
    CHECK_THROWS_WITH(check_environment(), Catch::Contains("NUBO_S3_TIMEOUT"));
  }
  ScopedEnv e("NUBO_GS_ENDPOINT_URL", "storage.googleapis.com");
  CHECK_THROWS_WITH(check_environment(),
                    Catch::Contains("NUBO_GS_ENDPOINT_URL") && Catch::Contains("https://HOST"));
  ScopedEnv unset("NUBO_S3_TIMEOUT", nullptr);
  CHECK_FALSE(env::store_timeout_s());
}
