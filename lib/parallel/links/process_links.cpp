#include "parallel/links/process_links.hpp"

#include <algorithm>
#include <map>

#include "common/env.hpp"
#include "parallel/links/gloo_link.hpp"
#include "parallel/links/shm_link.hpp"

namespace nubo::parallel {

std::string transport_name(bool same_host, bool gpu) {
  if (gpu) return "NCCL";
  return same_host && !env::shm_disabled() ? "shm" : "Gloo/TCP";
}

HostLayout host_layout(const std::vector<ProcessInfo>& all, int rank) {
  HostLayout l;
  l.world = static_cast<int>(all.size());
  std::map<std::string, std::size_t> index;
  for (int r = 0; r < l.world; ++r) {
    const std::string& id = all[static_cast<std::size_t>(r)].host_id;
    auto [it, fresh] = index.try_emplace(id, l.hosts.size());
    if (fresh) l.hosts.emplace_back();
    auto& ranks = l.hosts[it->second];
    if (r == rank) {
      l.host = static_cast<int>(it->second);
      l.member = static_cast<int>(ranks.size());
    }
    ranks.push_back(r);
  }
  return l;
}

ProcessLinks link_processes(const std::shared_ptr<Store>& store, int rank, int workers,
                            const std::vector<ProcessInfo>& all,
                            std::chrono::milliseconds timeout) {
  const HostLayout layout = host_layout(all, rank);
  const auto& my_host = layout.hosts[static_cast<std::size_t>(layout.host)];
  const bool one_host = layout.hosts.size() == 1;
  const bool shm = transport_name(true, false) == "shm";

  // Gloo among `ranks` (one per host, or every process): loopback on one host; else
  // NUBO_ADDRESS, or this host's name.
  auto gloo = [&](const std::vector<int>& ranks, const std::string& prefix, bool leaders) {
    GlooLinkOptions o;
    o.size = static_cast<int>(ranks.size());
    o.rank = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
    o.local_size = workers;
    o.address =
        one_host ? "127.0.0.1" : env::address().value_or(all[static_cast<std::size_t>(rank)].host);
    o.timeout = timeout;
    if (leaders) {
      for (std::size_t h = 0; h < ranks.size(); ++h)
        o.names.push_back("host " + std::to_string(h) + " (" +
                          all[static_cast<std::size_t>(ranks[h])].host + ", " +
                          process_name(ranks[h], workers) + ")");
    }
    return connect_gloo(prefix.empty() ? store : prefixed(store, prefix), o);
  };
  auto shared_memory = [&] {
    ShmLinkOptions o;
    o.members = static_cast<int>(my_host.size());
    o.member = layout.member;
    for (int r : my_host) {
      o.pids.push_back(all[static_cast<std::size_t>(r)].pid);
      o.names.push_back(process_name(r, workers));
    }
    o.key = "shm/host" + std::to_string(layout.host);
    o.timeout = timeout;
    return connect_shm(store, o);
  };

  bool alone_on_hosts = true;
  for (const auto& h : layout.hosts) alone_on_hosts = alone_on_hosts && h.size() == 1;
  ProcessLinks links;
  if (!shm || alone_on_hosts) {
    std::vector<int> everyone;
    for (int r = 0; r < layout.world; ++r) everyone.push_back(r);
    links.remote = gloo(everyone, "", false);
    links.transport = transport_name(false, false) + (one_host ? " over loopback" : "");
    return links;
  }
  if (one_host) {
    links.remote = shared_memory();
    links.transport = transport_name(true, false);
    return links;
  }
  std::shared_ptr<Remote> in_host = my_host.size() > 1 ? shared_memory() : nullptr;
  std::shared_ptr<Remote> leaders;
  if (layout.member == 0) {
    std::vector<int> firsts;
    for (const auto& h : layout.hosts) firsts.push_back(h.front());
    leaders = gloo(firsts, "leaders/", true);
  }
  links.remote = make_hierarchical(in_host, leaders, layout);
  links.transport =
      "shm within hosts, Gloo/TCP between " + std::to_string(layout.hosts.size()) + " hosts";
  return links;
}

}  // namespace nubo::parallel
