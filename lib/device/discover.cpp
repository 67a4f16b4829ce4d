// nubo::discover: puts the host CPU, the CUDA probe and the simulated devices together, in the
// order CUDA_DEVICE_ORDER asks for and filtered by CUDA_VISIBLE_DEVICES.
#include <algorithm>
#include <numeric>

#include "common/env.hpp"
#include "common/log.hpp"
#include "device/backend/gpu_catalog.hpp"
#include "device/backend/visible_devices.hpp"
#include "device/cuda/cuda_probe.hpp"
#include "device/host/host_cpu.hpp"
#include "device/host/nics.hpp"
#include "device/sim/sim_devices.hpp"
#include "device/sim/topology_file.hpp"
#include "nubo/device.hpp"
#include "nubo/error.hpp"

namespace nubo {
namespace {

// Reorders devices (and both axes of the link matrix) to `order`, renumbering indices.
void reorder(DeviceReport& r, const std::vector<int>& order) {
  std::vector<Device> devices;
  std::vector<std::vector<Link>> links(order.size(), std::vector<Link>(order.size()));
  for (std::size_t a = 0; a < order.size(); ++a) {
    devices.push_back(r.devices[order[a]]);
    devices.back().index = static_cast<int>(a);
    for (std::size_t b = 0; b < order.size(); ++b) links[a][b] = r.links[order[a]][order[b]];
  }
  r.devices = std::move(devices);
  r.links = std::move(links);
}

void add_simulated(DeviceReport& r, const std::string& spec,
                   const std::optional<std::string>& topology_file) {
  const auto& catalog = detail::GpuCatalog::builtin();
  auto machine = detail::build_sim_machine(detail::parse_sim_spec(spec, catalog));
  if (topology_file) {
    auto topo = detail::read_topology_file(*topology_file);
    if (topo.links.size() != machine.devices.size())
      throw Error(Errc::invalid_argument, "topology file " + *topology_file + " describes " +
                                              std::to_string(topo.links.size()) +
                                              " GPUs, but the simulated devices '" + spec +
                                              "' are " + std::to_string(machine.devices.size()));
    machine.links = topo.links;
    for (std::size_t i = 0; i < topo.numa_nodes.size(); ++i)
      if (topo.numa_nodes[i] >= 0) machine.devices[i].numa_node = topo.numa_nodes[i];
  }
  int real = static_cast<int>(r.devices.size());
  r.devices = std::move(machine.devices);
  r.links = std::move(machine.links);
  std::string msg = std::to_string(r.devices.size()) + " simulated GPU(s) from '" + spec + "'";
  if (real > 0) msg += "; they replace the " + std::to_string(real) + " real CUDA device(s)";
  r.diagnoses.push_back({"sim-devices", Severity::info,
                         msg + ". Work on them runs on host threads.",
                         "Unset NUBO_SIM_DEVICES to use the real devices."});

  // CUDA applies its order and CUDA_VISIBLE_DEVICES itself; simulated devices get the same.
  std::vector<int> order(r.devices.size());
  std::iota(order.begin(), order.end(), 0);
  if (env::cuda_device_order() == env::DeviceOrder::fastest_first) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return r.devices[a].peak.fp32 > r.devices[b].peak.fp32; });
    reorder(r, order);
  }
  if (auto visible = env::cuda_visible_devices()) {
    auto v = detail::apply_visible_devices(*visible, r.devices);
    reorder(r, v.kept);
    r.diagnoses.insert(r.diagnoses.end(), v.diagnoses.begin(), v.diagnoses.end());
  }
}

// FP32 lanes per multiprocessor by compute capability (CUDA C Programming Guide, "Arithmetic
// Instructions"); 0 where nubo does not know the architecture.
int fp32_lanes_per_sm(int major, int minor) {
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : 128;
  if (major >= 9) return 128;
  return 0;
}

// Real devices report most figures themselves; the model table gives the peak rates. A model
// the table does not know still gets its fp32 peak from its own figures: lanes x 2 x clock.
void complete_from_catalog(Device& d) {
  const auto* m = detail::GpuCatalog::builtin().find_by_device_name(d.name);
  if (!m) {
    int lanes = fp32_lanes_per_sm(d.cc_major, d.cc_minor);
    d.peak = {};
    d.peak.fp32 = 2.0 * lanes * d.multiprocessors * d.clock_mhz * 1e-6;
    d.peak_source = d.peak.fp32 > 0 ? "device" : "unknown";
    log::info("discover: '" + d.name +
              "' is not in the GPU model table; only its fp32 peak is "
              "known, from its own figures");
    return;
  }
  d.model = m->model;
  d.peak = m->peak;
  d.peak_source = "catalog";
  if (d.memory_bandwidth_gbs <= 0) d.memory_bandwidth_gbs = m->memory_gbs;
}

}  // namespace

DeviceReport discover(const DiscoverOptions& options) {
  // Bad configuration is the caller's error, reported before any work.
  env::log_level();
  env::cuda_device_order();
  const bool cuda_on = env::cuda_enabled();  // NUBO_CUDA=2 is an error with the probe off too
  auto sim_spec = options.sim_devices ? options.sim_devices : env::sim_devices();
  auto topology = options.sim_topology_file ? options.sim_topology_file : env::sim_topology();
  auto plugin = options.cuda_plugin_path ? options.cuda_plugin_path : env::cuda_plugin();
  bool probe = options.probe_cuda && cuda_on;
  if (topology && !(sim_spec && !sim_spec->empty()))
    throw Error(Errc::invalid_argument,
                "a topology file (" + *topology +
                    ") applies to simulated devices, but none are set (NUBO_SIM_DEVICES)");

  DeviceReport r;
  r.host = detail::read_host_cpu();
  if (probe) {
    auto cuda = detail::probe_cuda(plugin);
    r.driver = cuda.driver;
    r.devices = std::move(cuda.devices);
    r.links = std::move(cuda.links);
    r.diagnoses = std::move(cuda.diagnoses);
    for (auto& d : r.devices) complete_from_catalog(d);
  }
  if (sim_spec && !sim_spec->empty()) add_simulated(r, *sim_spec, topology);
  detail::add_nics(r, "/");
  for (const auto& d : r.diagnoses) log::debug("discover: " + d.code + ": " + d.message);
  return r;
}

}  // namespace nubo
