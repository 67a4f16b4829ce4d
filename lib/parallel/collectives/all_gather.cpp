// all_gather: every worker receives every rank's block, in rank order.
#include "parallel/collectives/collective.hpp"

namespace nubo::parallel {
namespace {

class AllGather final : public Collective {
 public:
  void alone(const GroupView& g, int /*local*/, const Op& op) const override {
    const std::size_t bytes = op.count * dtype_size(op.type);
    for (int r = 0; r < g.size; ++r)
      copy_bytes(byte_at(op.out, static_cast<std::size_t>(r) * bytes), g.call(r).in, bytes);
  }

  // The process's blocks side by side (one worker: its own input), then across processes into
  // the leader's output, then copied to the others.
  std::size_t staging_bytes(const GroupView& g, const Op& op) const override {
    return g.size > 1 ? static_cast<std::size_t>(g.size) * op.count * dtype_size(op.type) : 0;
  }
  bool gathers(const GroupView& g) const override { return g.size > 1; }
  void gather(const GroupView& g, int local, const Op& op, ReduceOp /*first*/) const override {
    const std::size_t bytes = op.count * dtype_size(op.type);
    copy_bytes(byte_at(g.staging, static_cast<std::size_t>(local) * bytes), op.in, bytes);
  }
  Step action(const GroupView& g, const Op& op, ReduceOp /*last*/) const override {
    Step a = step_of(StepKind::gather, op);
    a.count = op.count * static_cast<std::size_t>(g.size);
    a.in = g.size > 1 ? g.staging : g.call(0).in;
    a.out = g.call(0).out;
    return a;
  }
  bool spreads(const GroupView& g) const override { return g.size > 1; }
  void spread(const GroupView& g, int local, const Op& op) const override {
    if (local != 0) {
      copy_bytes(op.out, g.call(0).out,
                 static_cast<std::size_t>(g.team_size) * op.count * dtype_size(op.type));
    }
  }
};

}  // namespace

const Collective& all_gather_collective() {
  static const AllGather c;
  return c;
}

}  // namespace nubo::parallel
