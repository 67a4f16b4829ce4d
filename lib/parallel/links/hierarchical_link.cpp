#include "parallel/links/hierarchical_link.hpp"

#include <algorithm>
#include <cstring>

#include "parallel/links/reduce.hpp"

namespace nubo::parallel {
namespace {

class HierarchicalLink final : public Remote {
 public:
  HierarchicalLink(std::shared_ptr<Remote> in_host, std::shared_ptr<Remote> leaders,
                   HostLayout layout)
      : in_host_(std::move(in_host)), leaders_(std::move(leaders)), l_(std::move(layout)) {
    for (std::size_t h = 0; h < l_.hosts.size(); ++h)
      widest_ = std::max(widest_, l_.hosts[h].size());
  }

  int rank() const override {
    return l_.hosts[static_cast<std::size_t>(l_.host)][static_cast<std::size_t>(l_.member)];
  }
  int size() const override { return l_.world; }

  void run(const Call& call, const Step& a) override {
    switch (a.kind) {
      case StepKind::reduce:
        return reduce(call, a);
      case StepKind::broadcast:
        return broadcast(call, a);
      case StepKind::gather:
        return gather(call, a);
      case StepKind::exchange:
        return exchange(call, a);
      case StepKind::barrier:
        on_host(call, a);
        between_hosts(call, a);
        on_host(call, a);
        return;
    }
  }

  void abort(const std::string& cause) noexcept override {
    if (in_host_) in_host_->abort(cause);
    if (leaders_) leaders_->abort(cause);
  }

 private:
  void on_host(const Call& call, const Step& step) {
    if (in_host_) in_host_->run(call, step);
  }
  void between_hosts(const Call& call, const Step& step) {
    if (leaders_) leaders_->run(call, step);
  }
  // The result everywhere on this host, from its leader.
  void spread_on_host(const Call& call, void* out, DType type, std::size_t count) {
    Step b;
    b.kind = StepKind::broadcast;
    b.type = type;
    b.root = 0;
    b.count = count;
    b.in = b.out = out;
    on_host(call, b);
  }

  void reduce(const Call& call, const Step& a) {
    // Within the host, then between the hosts: both sum, and avg divides at the end
    // (reduce.hpp's staged(); a host's processes are never taken as one rank here).
    const StagedReduce stages = staged(a.op, false);
    Step step = a;
    step.op = stages.first;
    on_host(call, step);
    step.op = stages.last;
    between_hosts(call, step);
    spread_on_host(call, a.out, a.type, a.count);
    if (stages.divide) divide_by(a.type, a.out, a.count, l_.world);
  }

  void broadcast(const Call& call, const Step& a) {
    int root_host = 0, root_member = 0;
    for (std::size_t h = 0; h < l_.hosts.size(); ++h) {
      const auto& ranks = l_.hosts[h];
      const auto it = std::find(ranks.begin(), ranks.end(), a.root);
      if (it == ranks.end()) continue;
      root_host = static_cast<int>(h);
      root_member = static_cast<int>(it - ranks.begin());
    }
    Step step = a;
    if (l_.host == root_host) {
      step.root = root_member;
      on_host(call, step);
      step.root = root_host;
      between_hosts(call, step);
    } else {
      step.root = root_host;
      between_hosts(call, step);
      spread_on_host(call, a.out, a.type, a.count);
    }
  }

  void gather(const Call& call, const Step& a) {
    const std::size_t block = a.count * dtype_size(a.type);
    const std::size_t hosts = l_.hosts.size();
    // This host's blocks, padded to the widest host's number.
    std::vector<unsigned char> host_blocks(widest_ * block);
    Step on_this_host = a;
    on_this_host.out = host_blocks.data();
    if (in_host_) {
      on_host(call, on_this_host);
    } else if (block > 0) {
      std::memcpy(host_blocks.data(), a.in, block);
    }
    if (leaders_) {
      std::vector<unsigned char> all(hosts * widest_ * block);
      Step between = a;
      between.count = a.count * widest_;
      between.in = host_blocks.data();
      between.out = all.data();
      between_hosts(call, between);
      for (std::size_t h = 0; h < hosts && block > 0; ++h)
        for (std::size_t i = 0; i < l_.hosts[h].size(); ++i)
          std::memcpy(
              static_cast<unsigned char*>(a.out) + static_cast<std::size_t>(l_.hosts[h][i]) * block,
              all.data() + (h * widest_ + i) * block, block);
    }
    spread_on_host(call, a.out, a.type, a.count * static_cast<std::size_t>(l_.world));
  }

  // Every process's whole input gathered on its host; the leaders exchange, per pair of hosts,
  // a block from each process of one to each of the other (padded to the widest host); each
  // leader broadcasts what it received on its host, and every process takes its blocks.
  void exchange(const Call& call, const Step& a) {
    const std::size_t block = a.bytes();
    const auto world = static_cast<std::size_t>(l_.world);
    const std::size_t hosts = l_.hosts.size();
    const auto& here = l_.hosts[static_cast<std::size_t>(l_.host)];
    const std::size_t pair = widest_ * widest_ * block;
    // Every process's whole input, on every process of its host (the leader uses it).
    std::vector<unsigned char> host_in(here.size() * world * block);
    if (in_host_) {
      Step on_this_host = a;
      on_this_host.kind = StepKind::gather;
      on_this_host.count = a.count * world;
      on_this_host.out = host_in.data();
      on_host(call, on_this_host);
    } else if (block > 0) {
      std::memcpy(host_in.data(), a.in, world * block);
    }
    std::vector<unsigned char> received(hosts * pair);
    if (leaders_) {
      std::vector<unsigned char> sent(hosts * pair);
      for (std::size_t h = 0; h < hosts && block > 0; ++h)
        for (std::size_t i = 0; i < here.size(); ++i)
          for (std::size_t j = 0; j < l_.hosts[h].size(); ++j)
            std::memcpy(
                sent.data() + h * pair + (i * widest_ + j) * block,
                host_in.data() + (i * world + static_cast<std::size_t>(l_.hosts[h][j])) * block,
                block);
      Step between = a;
      between.count = a.count * widest_ * widest_;
      between.in = sent.data();
      between.out = received.data();
      between_hosts(call, between);
    }
    spread_on_host(call, received.data(), a.type, hosts * widest_ * widest_ * a.count);
    const auto j = static_cast<std::size_t>(l_.member);
    for (std::size_t h = 0; h < hosts && block > 0; ++h)
      for (std::size_t i = 0; i < l_.hosts[h].size(); ++i)
        std::memcpy(
            static_cast<unsigned char*>(a.out) + static_cast<std::size_t>(l_.hosts[h][i]) * block,
            received.data() + h * pair + (i * widest_ + j) * block, block);
  }

  std::shared_ptr<Remote> in_host_;
  std::shared_ptr<Remote> leaders_;
  HostLayout l_;
  std::size_t widest_ = 1;
};

}  // namespace

std::shared_ptr<Remote> make_hierarchical(std::shared_ptr<Remote> in_host,
                                          std::shared_ptr<Remote> leaders, HostLayout layout) {
  return std::make_shared<HierarchicalLink>(std::move(in_host), std::move(leaders),
                                            std::move(layout));
}

}  // namespace nubo::parallel
