// NICs in the topology, from sysfs trees built by the test: an HGX-like machine with 8 GPUs and
// 8 InfiniBand NICs (each GPU beside one NIC under a leaf PCIe switch, two leaves under a switch
// per host bridge, two host bridges per socket), and a cloud VM with one GPU and one Ethernet NIC
// on the host bridge. The affinities are what `nvidia-smi topo -m` prints for such trees.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "device/host/nics.hpp"

namespace fs = std::filesystem;
using nubo::LinkKind;

namespace {

class Tree {
 public:
  Tree() {
    root_ = fs::temp_directory_path() /
            ("nubo-nics-" + std::to_string(::getpid()) + "-" + std::to_string(++counter()));
    fs::create_directories(root_ / "sys/bus/pci/devices");
  }
  ~Tree() { fs::remove_all(root_); }
  std::string root() const { return root_.string(); }

  // A PCI function at host bridge `hb` behind the bridges of `chain` (the last is the device).
  fs::path device(const std::string& hb, const std::vector<std::string>& chain, int numa) {
    fs::path dir = root_ / "sys/devices" / hb;
    for (const auto& f : chain) dir /= f;
    fs::create_directories(dir);
    std::ofstream(dir / "numa_node") << numa << "\n";
    const fs::path link = root_ / "sys/bus/pci/devices" / chain.back();
    if (!fs::exists(link)) fs::create_directory_symlink(dir, link);
    return dir;
  }
  void infiniband(const std::string& name, const fs::path& dir, const std::string& interface,
                  const std::string& rate) {
    const fs::path entry = root_ / "sys/class/infiniband" / name;
    fs::create_directories(entry / "ports/1");
    fs::create_directory_symlink(dir, entry / "device");
    std::ofstream(entry / "ports/1/rate") << rate << "\n";
    fs::create_directories(dir / "net" / interface);
  }
  // virtio: the interface's device is a virtio device on the PCI function, as on cloud VMs.
  void ethernet(const std::string& name, const fs::path& dir, int mbps, bool virtio = false) {
    const fs::path entry = root_ / "sys/class/net" / name;
    fs::create_directories(entry);
    const fs::path target = virtio ? dir / "virtio2" : dir;
    fs::create_directories(target);
    fs::create_directory_symlink(target, entry / "device");
    std::ofstream(entry / "speed") << mbps << "\n";
  }
  void virtual_interface(const std::string& name) {
    fs::create_directories(root_ / "sys/class/net" / name);  // no device link: not PCI
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  fs::path root_;
};

std::string bdf(int bus, int dev = 0) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0000:%02x:%02x.0", bus, dev);
  return buf;
}

nubo::Device gpu(int index, const std::string& sysfs_bdf) {
  nubo::Device d;
  d.backend = nubo::Backend::cuda;
  d.index = d.ordinal = index;
  d.pci_bus_id = "0000" + sysfs_bdf;  // NVML's 8-digit domain
  return d;
}

}  // namespace

TEST_CASE("NICs: an HGX-like machine, 8 GPUs and 8 InfiniBand NICs", "[nics]") {
  Tree t;
  nubo::DeviceReport report;
  for (int socket = 0; socket < 2; ++socket)
    for (int hb = 0; hb < 2; ++hb) {
      const int bus = socket * 0x80 + hb * 0x20;
      char name[16];
      std::snprintf(name, sizeof name, "pci0000:%02x", bus);
      for (int leaf = 0; leaf < 2; ++leaf) {
        const int b = bus + 3 + 4 * leaf;  // the leaf switch's buses: b, b+1; devices b+2, b+3
        std::vector<std::string> chain{bdf(bus, 1), bdf(bus + 1), bdf(bus + 2, leaf), bdf(b),
                                       bdf(b + 1, 0)};
        auto g = chain;
        g.push_back(bdf(b + 2));
        auto n = chain;
        n.back() = bdf(b + 1, 1);
        n.push_back(bdf(b + 3));
        const int index = socket * 4 + hb * 2 + leaf;
        t.device(name, g, socket);
        report.devices.push_back(gpu(index, bdf(b + 2)));
        t.infiniband("mlx5_" + std::to_string(index), t.device(name, n, socket),
                     "ibp" + std::to_string(index), "400 Gb/sec (4X NDR)");
      }
    }
  t.virtual_interface("lo");
  nubo::detail::add_nics(report, t.root());
  REQUIRE(report.nics.size() == 8);
  for (int i = 0; i < 8; ++i) {
    const auto& nic = report.nics[static_cast<std::size_t>(i)];
    CHECK(nic.name == "mlx5_" + std::to_string(i));
    CHECK(nic.kind == "infiniband");
    CHECK(nic.interface == "ibp" + std::to_string(i));
    CHECK(nic.rate_gbps == 400);
    CHECK(nic.numa_node == i / 4);
  }
  // nvidia-smi topo -m of this tree: the NIC beside each GPU PIX, its neighbour under the same
  // upper switch PXB, the other host bridge of its socket NODE, the other socket SYS.
  for (int g = 0; g < 8; ++g)
    for (int n = 0; n < 8; ++n) {
      const LinkKind expected = g == n           ? LinkKind::pix
                                : g / 2 == n / 2 ? LinkKind::pxb
                                : g / 4 == n / 4 ? LinkKind::node
                                                 : LinkKind::sys;
      INFO("GPU" << g << " NIC" << n);
      CHECK(report.gpu_nic[static_cast<std::size_t>(g)][static_cast<std::size_t>(n)] == expected);
    }
  REQUIRE(report.preferred_nic.size() == 8);
  for (int g = 0; g < 8; ++g) CHECK(report.preferred_nic[static_cast<std::size_t>(g)] == g);
  CHECK_THAT(report.to_json(), Catch::Contains("\"gpu_nic\"") && Catch::Contains("mlx5_7"));
}

TEST_CASE("NICs: a cloud VM with one GPU and one Ethernet NIC on the host bridge", "[nics]") {
  // As a lent H200 VM's sysfs shows it: the GPU at 0000:00:06.0, virtio-net at 0000:00:03.0.
  Tree t;
  nubo::DeviceReport report;
  t.device("pci0000:00", {bdf(0, 6)}, 0);
  report.devices.push_back(gpu(0, bdf(0, 6)));
  t.ethernet("ens5", t.device("pci0000:00", {bdf(0, 3)}, 0), 100000, true);
  t.virtual_interface("docker0");
  nubo::detail::add_nics(report, t.root());
  REQUIRE(report.nics.size() == 1);
  CHECK(report.nics[0].name == "ens5");
  CHECK(report.nics[0].kind == "ethernet");
  CHECK(report.nics[0].rate_gbps == 100);
  CHECK(report.gpu_nic[0][0] == LinkKind::phb);
  CHECK(report.preferred_nic[0] == 0);
}

TEST_CASE("NICs: a GPU or NIC missing from the tree is unknown, not an error", "[nics]") {
  Tree t;
  nubo::DeviceReport report;
  report.devices.push_back(gpu(0, bdf(0x40)));                      // not in the tree
  t.ethernet("eth0", t.device("pci0000:00", {bdf(0, 3)}, -1), -1);  // link down: speed -1
  nubo::detail::add_nics(report, t.root());
  REQUIRE(report.nics.size() == 1);
  CHECK(report.nics[0].rate_gbps == 0);
  CHECK(report.gpu_nic[0][0] == LinkKind::unknown);
  CHECK(report.preferred_nic[0] == -1);
  // An empty tree: no NICs.
  Tree empty;
  nubo::DeviceReport none;
  nubo::detail::add_nics(none, empty.root());
  CHECK(none.nics.empty());
}
