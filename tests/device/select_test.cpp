#include <catch2/catch.hpp>

#include "nubo/error.hpp"
#include "sim_helpers.hpp"

using namespace nubo;

namespace {
std::vector<int> indices(const std::vector<Device>& d) {
  std::vector<int> out;
  for (const auto& x : d) out.push_back(x.index);
  return out;
}
}  // namespace

TEST_CASE("4 GPUs of two NVLink islands of 4 give one whole island") {
  auto r = testing::sim_report("8xA100-SXM4-80GB", "two_islands.topo");
  CHECK(indices(r.select({4})) == std::vector<int>{0, 1, 2, 3});
  // With the first island unusable, the other island is chosen, not a mix.
  SelectRequest two;
  two.count = 2;
  CHECK(r.select(two).size() == 2);
  CHECK(indices(r.select({8})).size() == 8);
}

TEST_CASE("the best-connected group follows the DGX-1 mesh") {
  auto r = testing::sim_report("8xV100-SXM2-16GB");
  auto g = indices(r.select({2}));
  // NV2 pairs beat NV1 pairs: 0-3 is the lowest NV2 pair.
  CHECK(g == std::vector<int>{0, 3});
  auto four = indices(r.select({4}));
  for (std::size_t a = 0; a < four.size(); ++a)
    for (std::size_t b = a + 1; b < four.size(); ++b)
      CHECK(r.link(four[a], four[b]).kind == LinkKind::nvlink);
}

TEST_CASE("requirements on memory and compute capability filter the devices") {
  auto r = testing::sim_report("2xT4,2xA100-SXM4-80GB");
  SelectRequest big;
  big.count = 0;
  big.min_memory = 40ull << 30;
  CHECK(indices(r.select(big)) == std::vector<int>{2, 3});
  SelectRequest cc;
  cc.count = 2;
  cc.min_cc_major = 8;
  CHECK(indices(r.select(cc)) == std::vector<int>{2, 3});
}

TEST_CASE("select says why no group qualifies") {
  auto r = testing::sim_report("2xT4,2xA100-SXM4-80GB");
  SelectRequest req;
  req.count = 3;
  req.min_memory = 40ull << 30;
  try {
    r.select(req);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::unavailable);
    CHECK_THAT(e.what(), Catch::Contains("asked for 3") && Catch::Contains("2 of 4 qualify") &&
                             Catch::Contains("device 0") && Catch::Contains("15.0 GiB"));
  }
  CHECK_THROWS_WITH(r.select({-1}), Catch::Contains("count"));
  DiscoverOptions none;
  none.probe_cuda = false;
  none.sim_devices = "";
  CHECK_THROWS_WITH(discover(none).select({1}), Catch::Contains("no GPU was found"));
}

TEST_CASE("selection scales to 64 devices") {
  auto r = testing::sim_report("64xH100-SXM5-80GB");
  auto g = r.select({8});
  REQUIRE(g.size() == 8);
  for (std::size_t a = 1; a < g.size(); ++a)
    CHECK(r.link(g[0].index, g[a].index).kind == LinkKind::nvlink);
}
