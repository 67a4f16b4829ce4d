#include "device/sim/topology_file.hpp"

#include "common/small_file.hpp"
#include "common/text.hpp"
#include "device/sim/sim_devices.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

constexpr std::size_t kMaxFileBytes = 1u << 20;

[[noreturn]] void fail(const std::string& source, std::size_t line, const std::string& msg) {
  throw Error(Errc::invalid_argument,
              "topology file " + source + ":" + std::to_string(line) + ": " + msg);
}

bool is_gpu_label(std::string_view token, int expected) {
  return token == "GPU" + std::to_string(expected);
}

}  // namespace

Link parse_link_name(std::string_view cell) {
  Link l;
  if (cell == "X") {
    l.kind = LinkKind::self;
  } else if (cell.size() > 2 && cell.substr(0, 2) == "NV") {
    l.kind = LinkKind::nvlink;
    l.nvlinks = static_cast<int>(text::parse_int(cell.substr(2), "NVLink count", 1, 64));
  } else if (cell == "PIX") {
    l.kind = LinkKind::pix;
  } else if (cell == "PXB") {
    l.kind = LinkKind::pxb;
  } else if (cell == "PHB") {
    l.kind = LinkKind::phb;
  } else if (cell == "NODE") {
    l.kind = LinkKind::node;
  } else if (cell == "SYS") {
    l.kind = LinkKind::sys;
  } else {
    throw Error(Errc::invalid_argument, "unknown link '" + std::string(cell) +
                                            "'; expected X, NV<count>, PIX, PXB, PHB, NODE or SYS");
  }
  l.peer_access = peer_access_for(l.kind);
  return l;
}

// The header's extra columns are separated by tabs in nvidia-smi's output, or by two or more
// spaces when pasted through a terminal; their names have spaces in them ("CPU Affinity").
static std::vector<std::string> header_columns(std::string_view line) {
  std::vector<std::string> cols;
  std::string cur;
  int spaces = 0;
  auto flush = [&] {
    auto t = text::trim(cur);
    if (!t.empty()) cols.emplace_back(t);
    cur.clear();
  };
  for (char ch : line) {
    if (ch == '\t') {
      flush();
      spaces = 0;
    } else if (ch == ' ') {
      if (++spaces == 2) flush();
      if (spaces < 2) cur += ch;
    } else {
      spaces = 0;
      cur += ch;
    }
  }
  flush();
  return cols;
}

Topology parse_topology(std::string_view text, const std::string& source) {
  if (text.size() > kMaxFileBytes) fail(source, 0, "larger than 1 MiB");
  Topology topo;
  int n = -1;            // GPU columns in the header
  int numa_column = -1;  // column of "NUMA Affinity", counted from the first GPU column
  std::size_t line_no = 0;
  for (auto raw : text::split(text, '\n')) {
    ++line_no;
    auto line = text::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    if (line.substr(0, 7) == "Legend:") break;
    if (n < 0) {
      // GPU labels are single words; the extra columns after them may have spaces.
      auto words = text::split_whitespace(line);
      n = 0;
      while (n < static_cast<int>(words.size()) && is_gpu_label(words[n], n)) ++n;
      if (n == 0) fail(source, line_no, "expected a header 'GPU0 GPU1 ...'");
      if (n > kMaxSimDevices)
        fail(source, line_no, "more than " + std::to_string(kMaxSimDevices) + " GPUs");
      auto last_gpu = line.find("GPU" + std::to_string(n - 1));
      auto extras = header_columns(line.substr(last_gpu + 3 + std::to_string(n - 1).size()));
      for (int c = 0; c < static_cast<int>(extras.size()); ++c)
        if (extras[c] == "NUMA Affinity") numa_column = n + c;
      topo.links.assign(n, std::vector<Link>(n));
      topo.numa_nodes.assign(n, -1);
      continue;
    }
    // Row cells never hold spaces ("0-31", "N/A", "NV12"), so whitespace splits them.
    auto tokens = text::split_whitespace(line);
    if (tokens[0].substr(0, 3) == "NIC") continue;  // NIC rows: not GPUs
    if (tokens[0].substr(0, 3) != "GPU")
      fail(source, line_no,
           "expected a row starting with GPU<i>, got '" + std::string(tokens[0]) + "'");
    int i = 0;
    try {
      i = static_cast<int>(
          text::parse_int(tokens[0].substr(3), "row label " + std::string(tokens[0]), 0, n - 1));
    } catch (const Error& e) {
      fail(source, line_no, e.what());
    }
    if (topo.links[i][i].kind == LinkKind::self)
      fail(source, line_no, "row GPU" + std::to_string(i) + " appears twice");
    if (static_cast<int>(tokens.size()) < n + 1)
      fail(source, line_no,
           "row GPU" + std::to_string(i) + " has " + std::to_string(tokens.size() - 1) +
               " cells, expected " + std::to_string(n));
    for (int j = 0; j < n; ++j) {
      try {
        topo.links[i][j] = parse_link_name(tokens[j + 1]);
      } catch (const Error& e) {
        fail(source, line_no,
             "GPU" + std::to_string(i) + "/GPU" + std::to_string(j) + ": " + e.what());
      }
      if ((i == j) != (topo.links[i][j].kind == LinkKind::self))
        fail(source, line_no,
             "GPU" + std::to_string(i) + "/GPU" + std::to_string(j) +
                 ": X belongs on the diagonal, and only there");
    }
    if (numa_column >= 0) {
      auto pos = static_cast<std::size_t>(numa_column + 1);
      if (pos < tokens.size() && tokens[pos] != "N/A")
        topo.numa_nodes[i] =
            static_cast<int>(text::parse_int(tokens[pos], "NUMA Affinity", 0, 1023));
    }
  }
  if (n < 0) fail(source, line_no, "no header row");
  for (int i = 0; i < n; ++i) {
    if (topo.links[i][i].kind != LinkKind::self)
      fail(source, line_no, "missing the row for GPU" + std::to_string(i));
    for (int j = 0; j < i; ++j) {
      const auto &a = topo.links[i][j], &b = topo.links[j][i];
      if (a.kind != b.kind || a.nvlinks != b.nvlinks)
        fail(source, line_no,
             "the matrix is not symmetric: GPU" + std::to_string(i) + "/GPU" + std::to_string(j) +
                 " is " + a.name() + " but GPU" + std::to_string(j) + "/GPU" + std::to_string(i) +
                 " is " + b.name());
    }
  }
  return topo;
}

Topology read_topology_file(const std::string& path) {
  return parse_topology(files::read_small_file(path, kMaxFileBytes, "topology file").bytes, path);
}

}  // namespace nubo::detail
