// cuda_facts: the plugin's facts as nubo's devices and link matrix.
#include <catch2/catch.hpp>

#include "device/cuda/cuda_facts.hpp"
#include "facts_builder.hpp"

using namespace nubo;
using namespace nubo::detail;
using nubo::test::healthy_facts;

TEST_CASE("CUDA devices take their figures from the facts", "[cuda][facts]") {
  auto f = healthy_facts();
  auto devices = devices_from_facts(*f);
  REQUIRE(devices.size() == 2);
  const Device& d = devices[1];
  CHECK(d.backend == Backend::cuda);
  CHECK(d.index == 1);
  CHECK(d.ordinal == 1);
  CHECK(d.name == "NVIDIA H100 80GB HBM3");
  CHECK(d.uuid == "GPU-fa4e0000-0000-0000-0000-000000000001");
  CHECK(d.pci_bus_id == "00000000:20:00.0");
  CHECK(d.cc_major == 9);
  CHECK(d.multiprocessors == 132);
  CHECK(d.clock_mhz == 1980);
  CHECK(d.memory_total == 85520809984ull);
  CHECK(d.memory_free == 85520809984ull - (512ull << 20));
  // 2 transfers x 2619 MHz x 5120 bits / 8: H100 SXM's 3.35 TB/s.
  CHECK(d.memory_bandwidth_gbs == Approx(3352.32));
  CHECK(d.numa_node == 0);
  CHECK_FALSE(d.mig_enabled);
  CHECK(d.model.empty());  // the GPU model table is discover's job

  auto driver = driver_from_facts(*f);
  CHECK(driver.loaded);
  CHECK(driver.driver_version == 13000);
  CHECK(driver.runtime_version == 13000);
  CHECK(driver.driver_release == "580.65.06");
}

TEST_CASE("links follow NVLink counts, then the NVML common ancestor", "[cuda][facts]") {
  auto f = healthy_facts(4);
  SECTION("PCIe levels as nvidia-smi topo -m names them") {
    f->topology_level[0][1] = f->topology_level[1][0] = 10;
    f->topology_level[0][2] = 30;
    f->topology_level[0][3] = 50;
    f->topology_level[1][2] = 40;
    f->topology_level[1][3] = 0;
    f->topology_level[2][3] = 77;  // a level nubo does not know
    auto links = links_from_facts(*f);
    CHECK(links[0][0].name() == "X");
    CHECK(links[0][1].name() == "PIX");
    CHECK(links[1][0].name() == "PIX");
    CHECK(links[0][2].name() == "PHB");
    CHECK(links[0][3].name() == "SYS");
    CHECK(links[1][2].name() == "NODE");
    CHECK(links[1][3].name() == "PIX");
    CHECK(links[2][3].kind == LinkKind::unknown);
    CHECK(links[0][1].peer_access);
  }
  SECTION("direct NVLinks") {
    f->nvlinks[0][1] = f->nvlinks[1][0] = 12;
    auto links = links_from_facts(*f);
    CHECK(links[0][1].kind == LinkKind::nvlink);
    CHECK(links[0][1].nvlinks == 12);
    CHECK(links[1][0].name() == "NV12");
    CHECK(links[0][2].name() == "PXB");
  }
  SECTION("NVSwitch: every pair gets the links both GPUs have to the switches") {
    for (int i = 0; i < 4; ++i) f->nvml_devices[i].nvswitch_links = 18;
    f->nvml_devices[3].nvswitch_links = 12;
    auto links = links_from_facts(*f);
    CHECK(links[0][1].name() == "NV18");
    CHECK(links[2][0].name() == "NV18");
    CHECK(links[0][3].name() == "NV12");
  }
  SECTION("without NVML the kind is unknown but peer access is known") {
    f->nvml_loaded = 0;
    f->nvml_devices_listed = 0;
    f->peer_access[0][2] = 0;
    auto links = links_from_facts(*f);
    CHECK(links[0][1].kind == LinkKind::unknown);
    CHECK(links[0][1].peer_access);
    CHECK_FALSE(links[0][2].peer_access);
    CHECK(links[2][2].kind == LinkKind::self);
  }
}

TEST_CASE("CUDA devices are matched to NVML entries by the plugin's index", "[cuda][facts]") {
  auto f = healthy_facts(2);
  // CUDA_VISIBLE_DEVICES=1: CUDA ordinal 0 is NVML's GPU 1.
  f->devices[0] = f->devices[1];
  f->devices_listed = 1;
  f->nvml_devices[1].mig_mode = 1;
  f->nvml_devices[1].numa_node = 1;
  f->devices[0].numa_node = -1;
  auto devices = devices_from_facts(*f);
  REQUIRE(devices.size() == 1);
  CHECK(devices[0].index == 0);
  CHECK(devices[0].pci_bus_id == "00000000:20:00.0");
  CHECK(devices[0].mig_enabled);
  CHECK(devices[0].numa_node == 1);
}

TEST_CASE("CUDA versions are written major.minor", "[cuda][facts]") {
  CHECK(cuda_version_string(12040) == "12.4");
  CHECK(cuda_version_string(13000) == "13.0");
  CHECK(cuda_version_string(12090) == "12.9");
  CHECK(cuda_version_string(0) == "unknown");
  CHECK(link_kind_from_nvml_level(20) == LinkKind::pxb);
}
