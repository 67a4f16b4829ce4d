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

  void run(const Op& call, std::uint64_t seq, const Op& a) override {
    switch (a.kind) {
      case OpKind::all_reduce:
        return all_reduce(call, seq, a);
      case OpKind::broadcast:
        return broadcast(call, seq, a);
      case OpKind::all_gather:
        return all_gather(call, seq, a);
      case OpKind::reduce_scatter:
      case OpKind::barrier:
        on_host(call, seq, a);
        between_hosts(call, seq, a);
        on_host(call, seq, a);
        return;
    }
  }

  void abort(const std::string& cause) noexcept override {
    if (in_host_) in_host_->abort(cause);
    if (leaders_) leaders_->abort(cause);
  }

 private:
  void on_host(const Op& call, std::uint64_t seq, const Op& action) {
    if (in_host_) in_host_->run(call, seq, action);
  }
  void between_hosts(const Op& call, std::uint64_t seq, const Op& action) {
    if (leaders_) leaders_->run(call, seq, action);
  }
  // The result everywhere on this host, from its leader.
  void spread_on_host(const Op& call, std::uint64_t seq, void* out, DType type, std::size_t count) {
    Op b;
    b.kind = OpKind::broadcast;
    b.type = type;
    b.root = 0;
    b.count = count;
    b.in = b.out = out;
    on_host(call, seq, b);
  }

  void all_reduce(const Op& call, std::uint64_t seq, const Op& a) {
    // Within the host, then between the hosts: both sum, and avg divides at the end
    // (reduce.hpp's staged(); a host's processes are never taken as one rank here).
    const StagedReduce stages = staged(a.op, false);
    Op step = a;
    step.op = stages.first;
    on_host(call, seq, step);
    step.op = stages.last;
    between_hosts(call, seq, step);
    spread_on_host(call, seq, a.out, a.type, a.count);
    if (stages.divide) divide_by(a.type, a.out, a.count, l_.world);
  }

  void broadcast(const Op& call, std::uint64_t seq, const Op& a) {
    int root_host = 0, root_member = 0;
    for (std::size_t h = 0; h < l_.hosts.size(); ++h) {
      const auto& ranks = l_.hosts[h];
      const auto it = std::find(ranks.begin(), ranks.end(), a.root);
      if (it == ranks.end()) continue;
      root_host = static_cast<int>(h);
      root_member = static_cast<int>(it - ranks.begin());
    }
    Op step = a;
    if (l_.host == root_host) {
      step.root = root_member;
      on_host(call, seq, step);
      step.root = root_host;
      between_hosts(call, seq, step);
    } else {
      step.root = root_host;
      between_hosts(call, seq, step);
      spread_on_host(call, seq, a.out, a.type, a.count);
    }
  }

  void all_gather(const Op& call, std::uint64_t seq, const Op& a) {
    const std::size_t block = a.count * dtype_size(a.type);
    const std::size_t hosts = l_.hosts.size();
    // This host's blocks, padded to the widest host's number.
    std::vector<unsigned char> host_blocks(widest_ * block);
    Op gather = a;
    gather.out = host_blocks.data();
    if (in_host_) {
      on_host(call, seq, gather);
    } else if (block > 0) {
      std::memcpy(host_blocks.data(), a.in, block);
    }
    if (leaders_) {
      std::vector<unsigned char> all(hosts * widest_ * block);
      Op between = a;
      between.count = a.count * widest_;
      between.in = host_blocks.data();
      between.out = all.data();
      between_hosts(call, seq, between);
      for (std::size_t h = 0; h < hosts && block > 0; ++h)
        for (std::size_t i = 0; i < l_.hosts[h].size(); ++i)
          std::memcpy(
              static_cast<unsigned char*>(a.out) + static_cast<std::size_t>(l_.hosts[h][i]) * block,
              all.data() + (h * widest_ + i) * block, block);
    }
    spread_on_host(call, seq, a.out, a.type, a.count * static_cast<std::size_t>(l_.world));
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
