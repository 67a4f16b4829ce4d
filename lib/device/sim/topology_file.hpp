// A topology file describes how simulated devices are linked when the built-in rules do not
// (NUBO_SIM_TOPOLOGY). Its format is the matrix `nvidia-smi topo -m` prints, so a real
// machine's output can be pasted in:
//
//           GPU0  GPU1  GPU2  GPU3  CPU Affinity  NUMA Affinity
//   GPU0     X    NV12  SYS   SYS   0-31          0
//   GPU1    NV12   X    SYS   SYS   0-31          0
//   ...
//
// Cells are X, NV<n>, PIX, PXB, PHB, NODE or SYS; columns after the GPU columns are ignored
// except "NUMA Affinity"; lines starting with '#' and everything from "Legend:" on are ignored.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nubo/device.hpp"

namespace nubo::detail {

struct Topology {
  std::vector<std::vector<Link>> links;
  std::vector<int> numa_nodes;  // -1 where the file gives none
};

// `source` names the text in errors (the file's path).
Topology parse_topology(std::string_view text, const std::string& source);
Topology read_topology_file(const std::string& path);

// "NV12" -> {nvlink, 12}; "PHB" -> {phb}; throws invalid_argument for anything else.
Link parse_link_name(std::string_view cell);

}  // namespace nubo::detail
