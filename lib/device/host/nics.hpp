// The machine's network devices and how each GPU reaches them, read from sysfs as `nvidia-smi
// topo -m` shows them: InfiniBand and EFA devices (/sys/class/infiniband) and Ethernet interfaces
// backed by a PCI device (/sys/class/net), with their PCI addresses, NUMA nodes and link rates;
// and for a GPU and a NIC the path between them in the PCIe tree: PIX (one PCIe switch), PXB
// (several switches, not the host bridge), PHB (the host bridge), NODE (two host bridges of one
// NUMA node), SYS (across NUMA nodes).
#pragma once

#include <string>
#include <vector>

#include "nubo/device.hpp"

namespace nubo::detail {

// Read under `root` ("/" for this machine; a fixture tree in tests). A NIC whose device cannot
// be followed to PCI (a virtual interface, loopback) is not listed. Sorted by PCI address.
std::vector<Nic> read_nics(const std::string& root = "/");

// How the PCI device `gpu_bus_id` ("00000000:07:00.0" or "0000:07:00.0") reaches `nic`; unknown
// when either is not in the tree under `root`.
LinkKind pci_affinity(const std::string& gpu_bus_id, const Nic& nic, const std::string& root = "/");

// The NIC each GPU should use: the closest (PIX before PXB ...), then the fastest, then the first;
// -1 when there is none. affinity[g][n] as pci_affinity gives it.
std::vector<int> preferred_nics(const std::vector<std::vector<LinkKind>>& affinity,
                                const std::vector<Nic>& nics);

// Fills the report's nics, gpu_nic and preferred_nic from the tree under `root`.
void add_nics(DeviceReport& report, const std::string& root);

}  // namespace nubo::detail
