#include "table.hpp"

#include <cstdio>
#include <sstream>
#include <string>

namespace nubo_smi {
namespace {

std::string gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

std::string cuda_version(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string fit(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s + std::string(width - s.size(), ' ');
  return s.substr(0, width - 1) + "~";
}

}  // namespace

std::string device_table(const nubo::DeviceReport& r) {
  std::ostringstream out;
  char line[512];
  const auto& h = r.host;
  out << "nubo-smi  |  driver " << (r.driver.loaded ? r.driver.driver_release : "not loaded")
      << "  |  driver CUDA " << cuda_version(r.driver.driver_version) << "  |  runtime CUDA "
      << cuda_version(r.driver.runtime_version) << "\n\n";
  out << "Host: " << h.model << "\n";
  std::snprintf(line, sizeof line,
                "      %d sockets, %d cores, %d threads, %d NUMA node(s), %s memory (%s "
                "available)\n",
                h.sockets, h.physical_cores, h.logical_cores, h.numa_nodes,
                gib(h.memory_total).c_str(), gib(h.memory_available).c_str());
  out << line << "      BLAS: " << h.blas << "\n\n";
  if (r.devices.empty()) {
    out << "No GPU is usable: see the diagnoses below.\n";
    return out.str();
  }
  const char* rule =
      "+-----+------+--------------------------------------+------+-----+------------+---------+---"
      "----"
      "-----------------+------------------+\n";
  out << rule;
  out << "| GPU | kind | name                                 | CC   | SMs |     memory |    GB/s "
         "| "
         "TFLOP/s fp32/tf32/bf16 | bus id           |\n";
  out << rule;
  for (const auto& d : r.devices) {
    char tflops[64];
    std::snprintf(tflops, sizeof tflops, "%.1f/%.1f/%.1f", d.peak.fp32, d.peak.tf32, d.peak.bf16);
    std::snprintf(line, sizeof line,
                  "| %3d | %-4s | %s | %d.%d  | %3d | %10s | %7.0f | %22s | %s |\n", d.index,
                  std::string(nubo::backend_name(d.backend)).c_str(), fit(d.name, 36).c_str(),
                  d.cc_major, d.cc_minor, d.multiprocessors, gib(d.memory_total).c_str(),
                  d.memory_bandwidth_gbs, tflops, fit(d.pci_bus_id, 16).c_str());
    out << line;
  }
  out << rule;
  return out.str();
}

std::string topology_matrix(const nubo::DeviceReport& r) {
  std::ostringstream out;
  const auto n = r.devices.size();
  const auto nics = r.nics.size();
  out << "      ";
  for (std::size_t j = 0; j < n; ++j) out << fit("GPU" + std::to_string(j), 6);
  for (std::size_t k = 0; k < nics; ++k) out << fit("NIC" + std::to_string(k), 6);
  out << "NUMA Affinity\n";
  for (std::size_t i = 0; i < n; ++i) {
    out << fit("GPU" + std::to_string(i), 6);
    for (std::size_t j = 0; j < n; ++j) out << fit(r.links[i][j].name(), 6);
    for (std::size_t k = 0; k < nics; ++k)
      out << fit(nubo::Link{r.gpu_nic[i][k], 0, false}.name(), 6);
    int numa = r.devices[i].numa_node;
    out << (numa < 0 ? std::string("N/A") : std::to_string(numa)) << "\n";
  }
  if (nics > 0) {
    out << "\nNIC Legend:\n\n";
    for (std::size_t k = 0; k < nics; ++k) {
      const auto& nic = r.nics[k];
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.0f Gb/s", nic.rate_gbps);
      out << "  NIC" << k << ": " << nic.name << " (" << nic.kind << ", " << nic.pci_bus_id
          << (nic.rate_gbps > 0 ? std::string(", ") + rate : std::string()) << ")\n";
    }
    out << "\nEach GPU's NIC (the closest, then the fastest):";
    for (std::size_t i = 0; i < n && i < r.preferred_nic.size(); ++i)
      if (r.preferred_nic[i] >= 0) out << " GPU" << i << "->NIC" << r.preferred_nic[i];
    out << "\n";
  }
  out << "\nLegend:\n\n"
         "  X    = Self\n"
         "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
         "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
         "Bridges within a NUMA node\n"
         "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
         "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
         "Bridge)\n"
         "  PIX  = Connection traversing at most a single PCIe bridge\n"
         "  NV#  = Connection traversing a bonded set of # NVLinks\n"
         "  ?    = Unknown (NVML is missing)\n";
  bool any_peer = false;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) any_peer |= i != j && r.links[i][j].peer_access;
  if (n > 1) {
    out << "\nPeer access (P = direct GPU-to-GPU access works):\n      ";
    for (std::size_t j = 0; j < n; ++j) out << fit("GPU" + std::to_string(j), 6);
    out << "\n";
    for (std::size_t i = 0; i < n; ++i) {
      out << fit("GPU" + std::to_string(i), 6);
      for (std::size_t j = 0; j < n; ++j)
        out << fit(i == j ? "X" : (r.links[i][j].peer_access ? "P" : "-"), 6);
      out << "\n";
    }
    if (!any_peer) out << "No pair of GPUs has peer access: transfers go through host memory.\n";
  }
  return out.str();
}

std::string diagnoses_text(const nubo::DeviceReport& r) {
  std::ostringstream out;
  if (r.diagnoses.empty()) return "";
  out << "\nDiagnoses:\n";
  for (const auto& d : r.diagnoses) {
    out << "  [" << nubo::severity_name(d.severity) << "] " << d.code << ": " << d.message << "\n";
    if (!d.advice.empty()) out << "      advice: " << d.advice << "\n";
  }
  return out.str();
}

}  // namespace nubo_smi
