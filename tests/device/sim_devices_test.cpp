#include <catch2/catch.hpp>

#include "device/sim/sim_devices.hpp"
#include "nubo/error.hpp"
#include "sim_helpers.hpp"

using namespace nubo;
using namespace nubo::detail;

namespace {
SimMachine machine(const std::string& spec) {
  return build_sim_machine(parse_sim_spec(spec, GpuCatalog::builtin()));
}
int nvlinks_of(const SimMachine& m, int i) {
  int total = 0;
  for (const auto& l : m.links[i])
    if (l.kind == LinkKind::nvlink) total += l.nvlinks;
  return total;
}
}  // namespace

TEST_CASE("8 A100 SXM4 form one NVSwitch board: NV12 between every pair") {
  auto m = machine("8xA100-SXM4-80GB");
  REQUIRE(m.devices.size() == 8);
  for (int i = 0; i < 8; ++i) {
    CHECK(m.devices[i].backend == Backend::sim);
    CHECK(m.devices[i].index == i);
    CHECK(m.devices[i].memory_total == 81920ull << 20);
    CHECK(m.devices[i].cc_major == 8);
    for (int j = 0; j < 8; ++j) {
      CHECK(m.links[i][j].name() == (i == j ? "X" : "NV12"));
      CHECK(m.links[i][j].peer_access);
    }
  }
  CHECK(m.devices[0].uuid != m.devices[1].uuid);
  CHECK(m.devices[0].pci_bus_id < m.devices[1].pci_bus_id);
  CHECK(m.devices[0].numa_node == 0);
  CHECK(m.devices[7].numa_node == 1);
}

TEST_CASE("8 V100 SXM2 form the DGX-1 hybrid cube mesh: six NVLinks each, symmetric") {
  auto m = machine("8xV100-SXM2-32GB");
  for (int i = 0; i < 8; ++i) {
    CHECK(nvlinks_of(m, i) == 6);
    for (int j = 0; j < 8; ++j) {
      CHECK(m.links[i][j].kind == m.links[j][i].kind);
      CHECK(m.links[i][j].nvlinks == m.links[j][i].nvlinks);
    }
  }
  CHECK(m.links[0][3].name() == "NV2");
  CHECK(m.links[0][1].name() == "NV1");
  CHECK(m.links[0][5].name() == "SYS");  // no NVLink, other socket
}

TEST_CASE("PCIe cards meet at the host bridge, and across sockets when there are many") {
  auto mixed = machine("2xT4,1xV100-SXM2-16GB");
  REQUIRE(mixed.devices.size() == 3);
  CHECK(mixed.devices[2].model == "V100-SXM2-16GB");
  CHECK(mixed.links[0][1].name() == "PHB");
  CHECK(mixed.links[0][2].name() == "PHB");
  CHECK_FALSE(mixed.links[0][1].peer_access);
  auto eight = machine("8xT4");
  CHECK(eight.links[0][3].name() == "PHB");
  CHECK(eight.links[0][4].name() == "SYS");
}

TEST_CASE("more than 8 SXM GPUs fill several boards, joined by SYS") {
  auto m = machine("16xH100-SXM5-80GB");
  CHECK(m.links[0][7].name() == "NV18");
  CHECK(m.links[8][15].name() == "NV18");
  CHECK(m.links[0][8].name() == "SYS");
  CHECK(m.links[7][8].kind != LinkKind::nvlink);
}

TEST_CASE("a bare model means one device, and spaces are tolerated") {
  auto e = parse_sim_spec(" T4 , 2 x L4", GpuCatalog::builtin());
  REQUIRE(e.size() == 2);
  CHECK(e[0].count == 1);
  CHECK(e[1].count == 2);
  CHECK(e[1].model->model == "L4");
}

TEST_CASE("malformed simulated-device specs are clear errors") {
  auto bad = [](const char* spec, const char* why) {
    INFO(spec);
    try {
      parse_sim_spec(spec, GpuCatalog::builtin());
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains(why));
    }
  };
  bad("", "empty");
  bad("3xNoSuchGPU", "unknown GPU model 'NoSuchGPU'");
  bad("3xNoSuchGPU", "A100-SXM4-80GB");  // lists the known models
  bad("0xT4", "out of range");
  bad("65xT4", "out of range");
  bad("40xT4,40xL4", "more than 64");
  bad("2x", "missing the model");
  bad("T4,,L4", "empty entry");
  bad("-2xT4", "unknown GPU model");
  bad("99999999999999999999xT4", "out of range");
}

TEST_CASE("NUBO_SIM_DEVICES from the environment reaches discover") {
  testing::ScopedEnv e("NUBO_SIM_DEVICES", "2xL4");
  DiscoverOptions o;
  o.probe_cuda = false;
  auto r = discover(o);
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].name == "NVIDIA L4 (simulated)");
  CHECK(r.find_diagnosis("sim-devices"));
  testing::ScopedEnv bad("NUBO_SIM_DEVICES", "2xL5");
  CHECK_THROWS_WITH(discover(o), Catch::Contains("unknown GPU model 'L5'"));
}
