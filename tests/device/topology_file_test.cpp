#include <catch2/catch.hpp>

#include "device/sim/topology_file.hpp"
#include "nubo/error.hpp"
#include "sim_helpers.hpp"

using namespace nubo;
using namespace nubo::detail;

TEST_CASE("a pasted nvidia-smi topo -m matrix is read, legend and extra columns ignored") {
  auto t = read_topology_file(std::string(NUBO_TEST_DATA_DIR) + "/two_islands.topo");
  REQUIRE(t.links.size() == 8);
  CHECK(t.links[0][1].name() == "NV12");
  CHECK(t.links[3][4].name() == "SYS");
  CHECK(t.links[5][5].kind == LinkKind::self);
  CHECK(t.numa_nodes[0] == 0);
  CHECK(t.numa_nodes[7] == 1);
}

TEST_CASE("space-separated matrices and NIC rows are accepted") {
  auto t = parse_topology(
      "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      PIX     SYS     0-7     N/A\n"
      "GPU1    PIX      X      SYS     0-7     N/A\n"
      "NIC0    SYS     SYS      X\n",
      "t");
  CHECK(t.links[0][1].name() == "PIX");
  CHECK(t.links[0][1].peer_access);
  CHECK(t.numa_nodes[0] == -1);
}

TEST_CASE("bad topology files are errors naming the file, the line and the cell") {
  auto bad = [](const char* text, const char* why) {
    INFO(text);
    try {
      parse_topology(text, "bad.topo");
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains("bad.topo") && Catch::Contains(why));
    }
  };
  bad("", "no header");
  bad("CPU0 CPU1\n", "expected a header");
  bad("GPU0 GPU1\nGPU0 X NV4\nGPU1 NV2 X\n", "not symmetric");
  bad("GPU0 GPU1\nGPU0 X FAST\nGPU1 FAST X\n", "unknown link 'FAST'");
  bad("GPU0 GPU1\nGPU0 X NV0\nGPU1 NV0 X\n", "NVLink count");
  bad("GPU0 GPU1\nGPU0 X\n", "1 cells, expected 2");
  bad("GPU0 GPU1\nGPU0 X PHB\n", "missing the row for GPU1");
  bad("GPU0 GPU1\nGPU0 PHB X\nGPU1 X PHB\n", "diagonal");
  bad("GPU0 GPU1\nGPU0 X PHB\nGPU0 X PHB\n", "appears twice");
  bad("GPU0 GPU1\nGPU5 X PHB\n", "out of range");
  bad("GPU0 GPU1\nDisk X PHB\n", "expected a row starting with GPU");
}

TEST_CASE("a topology file must match the simulated devices and needs them") {
  CHECK_THROWS_WITH(testing::sim_report("4xA100-SXM4-80GB", "two_islands.topo"),
                    Catch::Contains("describes 8 GPUs") && Catch::Contains("are 4"));
  DiscoverOptions o;
  o.probe_cuda = false;
  o.sim_topology_file = "x.topo";
  CHECK_THROWS_WITH(discover(o), Catch::Contains("NUBO_SIM_DEVICES"));
  CHECK_THROWS_WITH(testing::sim_report("8xA100-SXM4-80GB", "no-such-file.topo"),
                    Catch::Contains("does not exist"));
}

TEST_CASE("the topology file replaces the built-in links of simulated devices") {
  auto r = testing::sim_report("8xA100-SXM4-80GB", "two_islands.topo");
  CHECK(r.link(0, 3).name() == "NV12");
  CHECK(r.link(0, 4).name() == "SYS");
  CHECK(r.devices[5].numa_node == 1);
}
