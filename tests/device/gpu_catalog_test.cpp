#include <catch2/catch.hpp>

#include "device/backend/gpu_catalog.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using detail::GpuCatalog;

TEST_CASE("the built-in model table has every model the issue names, with sane figures") {
  const auto& c = GpuCatalog::builtin();
  for (const char* m : {"T4", "V100-SXM2-16GB", "V100-SXM2-32GB", "A10G", "L4", "L40S",
                        "A100-PCIE-40GB", "A100-PCIE-80GB", "A100-SXM4-40GB", "A100-SXM4-80GB",
                        "H100-PCIE-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"}) {
    INFO(m);
    const auto* g = c.find(m);
    REQUIRE(g);
    CHECK(g->peak.fp32 > 0);
    CHECK(g->memory_bytes > (8ull << 30));
    CHECK(g->memory_gbs > 100);
    CHECK(g->peak.fp16 >= g->peak.fp32);
  }
  // Spot checks against the datasheets.
  CHECK(c.get("A100-SXM4-80GB").peak.bf16 == Approx(312));
  CHECK(c.get("A100-SXM4-80GB").nvlink_links == 12);
  CHECK(c.get("H100-SXM5-80GB").peak.fp16 == Approx(989.5));
  CHECK(c.get("T4").peak.bf16 == 0);  // Turing has no bf16
  CHECK_FALSE(c.get("V100-SXM2-16GB").nvswitch);
}

TEST_CASE("models are found by key case-insensitively and by the driver's device name") {
  const auto& c = GpuCatalog::builtin();
  CHECK(c.find("a100-sxm4-80gb")->model == "A100-SXM4-80GB");
  CHECK(c.find_by_device_name("NVIDIA A100-SXM4-80GB")->model == "A100-SXM4-80GB");
  CHECK(c.find_by_device_name("Tesla T4")->model == "T4");
  CHECK(c.find_by_device_name("NVIDIA H100 80GB HBM3")->model == "H100-SXM5-80GB");
  CHECK(c.find_by_device_name("Some Future GPU") == nullptr);
}

TEST_CASE("an unknown model is an error that lists the known ones") {
  try {
    GpuCatalog::builtin().get("B300");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::not_found);
    CHECK_THAT(e.what(), Catch::Contains("B300") && Catch::Contains("A100-SXM4-80GB") &&
                             Catch::Contains("T4"));
  }
}

namespace {
const char* kHeader =
    "model,cuda_name,architecture,cc,sms,boost_mhz,memory_mib,memory_gbs,fp32,tf32,fp16,bf16,"
    "form,nvlink_links,nvlink_gbs,nvswitch,pcie_gen,tdp_w\n";
std::string table(const std::string& row) {
  return kHeader + row + "\n";
}
}  // namespace

TEST_CASE("a malformed model row is rejected with the line and the reason") {
  const std::string good = "X1,NVIDIA X1,Test,8.0,10,1000,1024,100,1,0,2,2,pcie,0,0,0,4,100";
  CHECK(GpuCatalog::parse(table(good), "t.csv").models().size() == 1);
  auto bad = [&](const std::string& row, const char* why) {
    INFO(row);
    CHECK_THROWS_WITH(GpuCatalog::parse(table(row), "t.csv"),
                      Catch::Contains("t.csv:2") && Catch::Contains(why));
  };
  bad("X1,NVIDIA X1,Test,8,10,1000,1024,100,1,0,2,2,pcie,0,0,0,4,100", "MAJOR.MINOR");
  bad("X1,NVIDIA X1,Test,8.0,10,1000,1024,100,-1,0,2,2,pcie,0,0,0,4,100", "fp32");
  bad("X1,NVIDIA X1,Test,8.0,10,1000,1024,100,1,0,2,2,card,0,0,0,4,100", "sxm or pcie");
  bad("X1,NVIDIA X1,Test,8.0,10,1000,1024,100,1,0,2,2,sxm,0,0,1,4,100", "nvswitch");
  bad("X1,NVIDIA X1,Test,8.0,10,1000,1024,100,1,0,2,2,sxm,4,0,0,4,100", "nvlink");
  bad("X 1,NVIDIA X1,Test,8.0,10,1000,1024,100,1,0,2,2,pcie,0,0,0,4,100", "model");
  CHECK_THROWS_WITH(GpuCatalog::parse(table(good + "\n" + good), "t.csv"),
                    Catch::Contains("t.csv:3") && Catch::Contains("more than once"));
  CHECK_THROWS_WITH(GpuCatalog::parse(kHeader, "t.csv"), Catch::Contains("no models"));
}
