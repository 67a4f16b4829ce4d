#include "device/host/nics.hpp"

#include "common/sysfs_text.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace nubo::detail {
namespace {

namespace fs = std::filesystem;

// A sysfs number (-1 for "unknown", as numa_node and speed write it), or `fallback` when the
// file held something else: an odd sysfs is not worth failing discovery over.
int number_or(const std::string& text, int fallback) {
  try {
    return static_cast<int>(text::parse_int(text::trim(text), "sysfs value", -1, 1 << 30));
  } catch (const Error&) {
    return fallback;
  }
}

bool is_pci_function(const std::string& name) {
  // DDDD:BB:DD.F
  return name.size() == 12 && name[4] == ':' && name[7] == ':' && name[10] == '.';
}

// The PCI device directory a class entry's "device" link leads to: the function itself, or the
// function a virtio device sits on (a cloud VM's virtio-net: .../0000:00:03.0/virtio2); empty
// when it leads nowhere PCI (a virtual interface).
fs::path pci_device_of(const fs::path& class_entry) {
  std::error_code ec;
  fs::path dir = fs::canonical(class_entry / "device", ec);
  if (ec) return {};
  for (int up = 0; up < 2 && !dir.empty(); ++up, dir = dir.parent_path())
    if (is_pci_function(dir.filename().string())) return dir;
  return {};
}

// "200 Gb/sec (4X HDR)" -> 200.
double ib_rate_gbps(const fs::path& ibdev) {
  std::error_code ec;
  double best = 0;
  for (fs::directory_iterator it(ibdev / "ports", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rate = first_line(it->path() / "rate");
    try {
      best = std::max(best, std::stod(rate));
    } catch (...) {
    }
  }
  return best;
}

std::string first_interface(const fs::path& pci_dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(pci_dir / "net", ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names.empty() ? "" : names.front();
}

// The PCI path of a device: its host bridge ("pci0000:00") and the functions from the root port
// down to the device itself.
struct PciPath {
  std::string host_bridge;
  std::vector<std::string> chain;
  int numa_node = -1;
};

PciPath pci_path(const fs::path& device_dir) {
  PciPath p;
  for (const auto& part : device_dir) {
    const std::string s = part.string();
    if (s.rfind("pci", 0) == 0 && s.find(':') != std::string::npos) {
      p.host_bridge = s;
      p.chain.clear();
    } else if (!p.host_bridge.empty()) {
      p.chain.push_back(s);
    }
  }
  p.numa_node = number_or(first_line(device_dir / "numa_node"), -1);
  return p;
}

// "00000000:07:00.0" (NVML's and nvidia-smi's form) as sysfs names it: "0000:07:00.0".
std::string sysfs_bus_id(const std::string& bus_id) {
  std::string s = bus_id;
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto colon = s.find(':');
  if (colon != std::string::npos && colon > 4) s = s.substr(colon - 4);
  return s;
}

}  // namespace

std::vector<Nic> read_nics(const std::string& root) {
  const fs::path base(root);
  std::vector<Nic> out;
  std::set<std::string> taken;  // PCI functions already listed as an InfiniBand or EFA device
  std::error_code ec;
  for (fs::directory_iterator it(base / "sys/class/infiniband", ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path pci = pci_device_of(it->path());
    if (pci.empty()) continue;
    Nic n;
    n.name = it->path().filename().string();
    std::error_code driver_ec;
    const std::string driver = fs::canonical(pci / "driver", driver_ec).filename().string();
    n.kind = driver == "efa" || n.name.rfind("efa", 0) == 0 ? "efa" : "infiniband";
    n.interface = first_interface(pci);
    n.pci_bus_id = pci.filename().string();
    n.numa_node = number_or(first_line(pci / "numa_node"), -1);
    n.rate_gbps = ib_rate_gbps(it->path());
    taken.insert(n.pci_bus_id);
    out.push_back(std::move(n));
  }
  for (fs::directory_iterator it(base / "sys/class/net", ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path pci = pci_device_of(it->path());
    if (pci.empty() || taken.count(pci.filename().string())) continue;
    Nic n;
    n.name = n.interface = it->path().filename().string();
    n.kind = "ethernet";
    n.pci_bus_id = pci.filename().string();
    n.numa_node = number_or(first_line(pci / "numa_node"), -1);
    const int mbps = number_or(first_line(it->path() / "speed"), -1);
    n.rate_gbps = mbps > 0 ? mbps / 1000.0 : 0;
    out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(), [](const Nic& a, const Nic& b) {
    return a.pci_bus_id != b.pci_bus_id ? a.pci_bus_id < b.pci_bus_id : a.name < b.name;
  });
  return out;
}

LinkKind pci_affinity(const std::string& gpu_bus_id, const Nic& nic, const std::string& root) {
  const fs::path devices = fs::path(root) / "sys/bus/pci/devices";
  std::error_code ec_a, ec_b;
  const fs::path a_dir = fs::canonical(devices / sysfs_bus_id(gpu_bus_id), ec_a);
  const fs::path b_dir = fs::canonical(devices / nic.pci_bus_id, ec_b);
  if (ec_a || ec_b) return LinkKind::unknown;
  const PciPath a = pci_path(a_dir), b = pci_path(b_dir);
  if (a.host_bridge.empty() || b.host_bridge.empty()) return LinkKind::unknown;
  if (a.host_bridge != b.host_bridge)
    return a.numa_node == b.numa_node ? LinkKind::node : LinkKind::sys;
  std::size_t common = 0;
  while (common < a.chain.size() && common < b.chain.size() && a.chain[common] == b.chain[common])
    ++common;
  if (common == 0) return LinkKind::phb;  // they meet at the host bridge
  // Through one PCIe switch the path is up to its downstream port, through the switch, and down
  // again: two steps on each side. Anything longer crosses several switches.
  const std::size_t steps = (a.chain.size() - common) + (b.chain.size() - common);
  return steps <= 4 ? LinkKind::pix : LinkKind::pxb;
}

std::vector<int> preferred_nics(const std::vector<std::vector<LinkKind>>& affinity,
                                const std::vector<Nic>& nics) {
  std::vector<int> out;
  for (const auto& row : affinity) {
    int best = -1;
    for (std::size_t n = 0; n < row.size() && n < nics.size(); ++n) {
      if (row[n] == LinkKind::unknown) continue;
      if (best < 0) {
        best = static_cast<int>(n);
        continue;
      }
      const auto b = static_cast<std::size_t>(best);
      if (row[n] < row[b] || (row[n] == row[b] && nics[n].rate_gbps > nics[b].rate_gbps))
        best = static_cast<int>(n);
    }
    out.push_back(best);
  }
  return out;
}

void add_nics(DeviceReport& r, const std::string& root) {
  r.nics = read_nics(root);
  r.gpu_nic.assign(r.devices.size(), std::vector<LinkKind>(r.nics.size(), LinkKind::unknown));
  for (const auto& d : r.devices) {
    if (d.backend != Backend::cuda) continue;  // a simulated GPU is nowhere in the PCI tree
    for (std::size_t n = 0; n < r.nics.size(); ++n)
      r.gpu_nic[static_cast<std::size_t>(d.index)][n] = pci_affinity(d.pci_bus_id, r.nics[n], root);
  }
  r.preferred_nic = preferred_nics(r.gpu_nic, r.nics);
}

}  // namespace nubo::detail
