#include "parallel/core_share.hpp"

#include <algorithm>
#include <map>

namespace nubo::parallel {
namespace {

std::vector<int> numbers(const std::vector<detail::HostCore>& cores) {
  std::vector<int> out;
  for (const auto& c : cores) out.push_back(c.cpu);
  return out;
}

// The cores split among `parts` workers, NUMA-aware: with at least as many workers as nodes,
// each node gets workers in proportion to its cores and each worker's slice lies in one node;
// with fewer, contiguous slices of the node-ordered list (a worker spans whole nodes).
std::vector<std::vector<int>> split_by_node(const std::vector<detail::HostCore>& cores, int parts) {
  std::map<int, std::vector<int>> by_node;
  for (const auto& c : cores) by_node[c.node].push_back(c.cpu);
  const int nodes = static_cast<int>(by_node.size());
  if (nodes <= 1 || parts < nodes) return split_evenly(numbers(cores), parts);
  // Largest remainders: every node at least one worker, the rest by share of the cores.
  const double total = static_cast<double>(cores.size());
  std::vector<std::pair<int, std::vector<int>*>> nodes_list;
  for (auto& [node, cpus] : by_node) nodes_list.push_back({node, &cpus});
  std::vector<int> given(nodes_list.size(), 1);
  std::vector<double> remainder(nodes_list.size());
  int left = parts - nodes;
  const int spread = left;
  for (std::size_t i = 0; i < nodes_list.size(); ++i) {
    const double exact = spread * static_cast<double>(nodes_list[i].second->size()) / total;
    given[i] += static_cast<int>(exact);
    left -= static_cast<int>(exact);
    remainder[i] = exact - static_cast<int>(exact);
  }
  while (left-- > 0) {
    const auto most = std::max_element(remainder.begin(), remainder.end()) - remainder.begin();
    ++given[static_cast<std::size_t>(most)];
    remainder[static_cast<std::size_t>(most)] = -1.0;
  }
  std::vector<std::vector<int>> out;
  for (std::size_t i = 0; i < nodes_list.size(); ++i)
    for (auto& slice : split_evenly(*nodes_list[i].second, given[i])) out.push_back(slice);
  return out;
}

}  // namespace

std::vector<std::vector<int>> split_evenly(const std::vector<int>& cpus, int parts) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(std::max(parts, 0)));
  if (cpus.empty() || parts <= 0) return out;
  const int n = static_cast<int>(cpus.size());
  if (parts > n) {
    for (int i = 0; i < parts; ++i)
      out[static_cast<std::size_t>(i)] = {cpus[static_cast<std::size_t>(i % n)]};
    return out;
  }
  int start = 0;
  for (int i = 0; i < parts; ++i) {
    const int size = n / parts + (i < n % parts ? 1 : 0);
    out[static_cast<std::size_t>(i)].assign(cpus.begin() + start, cpus.begin() + start + size);
    start += size;
  }
  return out;
}

CoreShare share_cores(const CoreShareInput& in) {
  CoreShare s;
  const int workers = std::max(in.workers, 1);
  // The process's cores: all it may use when a launcher bound it already, or when it is alone
  // on the host; else its slice of them.
  std::vector<detail::HostCore> mine = in.allowed;
  const bool restricted = static_cast<int>(in.allowed.size()) < in.online;
  if (!restricted && in.local_processes > 1) {
    const auto slices = split_by_node(in.allowed, in.local_processes);
    const auto& slice = slices[static_cast<std::size_t>(in.local_process % in.local_processes)];
    std::vector<detail::HostCore> kept;
    for (const auto& c : in.allowed)
      if (std::find(slice.begin(), slice.end(), c.cpu) != slice.end()) kept.push_back(c);
    mine = kept;
  }
  s.process_cpus = numbers(mine);
  int budget = static_cast<int>(mine.size());
  if (in.env_threads) {
    budget = in.env_threads->threads;
    s.reason = std::string(in.env_threads->variable) + "=" + std::to_string(budget);
  } else if (restricted) {
    s.reason = std::to_string(budget) + " CPUs the process may use";
  } else if (in.local_processes > 1) {
    s.reason = std::to_string(in.online) + " CPUs / " + std::to_string(in.local_processes) +
               " processes on the host";
  } else {
    s.reason = std::to_string(budget) + " CPUs";
  }
  s.threads = std::max(1, budget / workers);
  if (workers > 1) s.reason += " / " + std::to_string(workers) + " workers";
  if (in.bind) s.cpus = split_by_node(mine, workers);
  return s;
}

}  // namespace nubo::parallel
