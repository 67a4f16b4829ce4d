#include "device/sim/sim_devices.hpp"

#include <cstdio>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

constexpr int kBaseboardSize = 8;  // HGX/DGX baseboards hold 8 SXM GPUs

// NVLinks between the 8 V100s of a DGX-1 (hybrid cube mesh), as `nvidia-smi topo -m` shows it;
// 0 means no NVLink (the pair talks over PCIe and the inter-socket link).
constexpr int kDgx1Mesh[8][8] = {{0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0},
                                 {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
                                 {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
                                 {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};

std::string sim_uuid(int index, const std::string& model, const std::string& modifiers) {
  // Deterministic, so that CUDA_VISIBLE_DEVICES=GPU-... works across runs (FNV-1a of the
  // model, the index and the modifiers: a derated device is another device).
  std::uint64_t h = 1469598103934665603ull;
  for (char c : model + "#" + std::to_string(index) + modifiers) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-5e1d%04x-%04x-%04x-%04x-%012llx", index & 0xffff,
                static_cast<unsigned>(h >> 48), static_cast<unsigned>((h >> 32) & 0xffff),
                static_cast<unsigned>((h >> 16) & 0xffff),
                static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

}  // namespace

bool peer_access_for(LinkKind kind) {
  return kind == LinkKind::self || kind == LinkKind::nvlink || kind == LinkKind::pix ||
         kind == LinkKind::pxb;
}

std::vector<SimEntry> parse_sim_spec(std::string_view spec, const GpuCatalog& catalog) {
  std::vector<SimEntry> entries;
  int total = 0;
  if (text::trim(spec).empty())
    throw Error(Errc::invalid_argument, "simulated devices: the spec is empty");
  for (auto part : text::split(spec, ',')) {
    auto entry = text::trim(part);
    auto what = "simulated devices: entry '" + std::string(entry) + "'";
    if (entry.empty())
      throw Error(Errc::invalid_argument,
                  "simulated devices: empty entry in '" + std::string(spec) +
                      "'; expected COUNTxMODEL[,COUNTxMODEL...], e.g. 8xA100-SXM4-80GB");
    SimEntry e;
    const auto colon = entry.find(':');
    if (colon != std::string_view::npos) {
      e.profile = parse_sim_profile(entry.substr(colon), what);
      entry = text::trim(entry.substr(0, colon));
    }
    auto x = entry.find_first_of("xX");
    std::string_view model = entry;
    e.count = 1;
    // "4xT4" has a count; a bare model ("T4") means one device.
    if (x != std::string_view::npos && x > 0 &&
        entry.substr(0, x).find_first_not_of("0123456789 ") == std::string_view::npos) {
      e.count = static_cast<int>(
          text::parse_int(entry.substr(0, x), what + ": count", 1, kMaxSimDevices));
      model = text::trim(entry.substr(x + 1));
    }
    if (model.empty())
      throw Error(Errc::invalid_argument, what + ": missing the model after the count");
    e.model = catalog.find(model);
    if (!e.model)
      throw Error(Errc::invalid_argument, what + ": unknown GPU model '" + std::string(model) +
                                              "'; known models: " + catalog.known_models());
    total += e.count;
    if (total > kMaxSimDevices)
      throw Error(Errc::invalid_argument, "simulated devices: more than " +
                                              std::to_string(kMaxSimDevices) + " devices in '" +
                                              std::string(spec) + "'");
    entries.push_back(e);
  }
  return entries;
}

SimMachine build_sim_machine(const std::vector<SimEntry>& entries) {
  SimMachine m;
  // Each entry's SXM parts fill baseboards of 8; `board` and `slot` place a device on one.
  std::vector<int> board, slot;
  std::vector<const GpuModel*> models;
  int next_board = 0;
  for (const auto& e : entries) {
    for (int k = 0; k < e.count; ++k) {
      Device d;
      d.backend = Backend::sim;
      d.index = d.ordinal = static_cast<int>(m.devices.size());
      d.model = e.model->model;
      d.name = e.model->cuda_name + " (simulated)";
      d.uuid = sim_uuid(d.index, d.model, e.profile.text);
      register_sim_profile(d.uuid, e.profile);
      char bus[32];
      std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x10 + d.index);
      d.pci_bus_id = bus;
      d.cc_major = e.model->cc_major;
      d.cc_minor = e.model->cc_minor;
      d.multiprocessors = e.model->sms;
      d.clock_mhz = e.model->boost_mhz;
      d.memory_total = d.memory_free = e.model->memory_bytes;
      d.memory_bandwidth_gbs = e.model->memory_gbs;
      d.peak = e.model->peak;
      d.peak_source = "catalog";
      m.devices.push_back(d);
      models.push_back(e.model);
      board.push_back(e.model->sxm ? next_board + k / kBaseboardSize : -1);
      slot.push_back(k % kBaseboardSize);
    }
    if (e.model->sxm) next_board += (e.count + kBaseboardSize - 1) / kBaseboardSize;
  }
  const int n = static_cast<int>(m.devices.size());
  // More than four GPUs: a two-socket host, the first half on NUMA node 0.
  for (int i = 0; i < n; ++i) m.devices[i].numa_node = n > 4 && i >= (n + 1) / 2 ? 1 : 0;

  m.links.assign(n, std::vector<Link>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      Link& l = m.links[i][j];
      if (i == j) {
        l.kind = LinkKind::self;
      } else if (board[i] >= 0 && board[i] == board[j]) {
        const GpuModel& model = *models[i];
        int links = model.nvswitch ? model.nvlink_links : kDgx1Mesh[slot[i]][slot[j]];
        if (links > 0) {
          l.kind = LinkKind::nvlink;
          l.nvlinks = links;
        }
      }
      if (l.kind == LinkKind::unknown)
        l.kind = m.devices[i].numa_node == m.devices[j].numa_node ? LinkKind::phb : LinkKind::sys;
      l.peer_access = peer_access_for(l.kind);
    }
  }
  return m;
}

}  // namespace nubo::detail
