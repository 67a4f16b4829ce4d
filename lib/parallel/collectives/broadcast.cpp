// broadcast: every worker's buffer becomes the root's.
#include "parallel/collectives/collective.hpp"

namespace nubo::parallel {
namespace {

class Broadcast final : public Collective {
 public:
  void alone(const GroupView& g, int local, const Op& op) const override {
    const int root = op.root - g.rank_offset;
    if (local != root) copy_bytes(op.out, g.call(root).out, op.count * dtype_size(op.type));
  }

  // Ranks are process * size + local (every process holds as many workers): the root's process
  // sends its buffer, the others receive into their leader's.
  Step action(const GroupView& g, const Op& op, ReduceOp /*last*/) const override {
    Step a = step_of(StepKind::broadcast, op);
    a.root = op.root / g.size;
    a.in = a.out = source(g, op);
    return a;
  }
  bool spreads(const GroupView& g) const override { return g.size > 1; }
  void spread(const GroupView& g, int /*local*/, const Op& op) const override {
    void* src = source(g, op);
    if (op.out != src) copy_bytes(op.out, src, op.count * dtype_size(op.type));
  }

 private:
  static void* source(const GroupView& g, const Op& op) {
    return op.root / g.size == g.process ? g.call(op.root % g.size).out : g.call(0).out;
  }
};

}  // namespace

const Collective& broadcast_collective() {
  static const Broadcast c;
  return c;
}

}  // namespace nubo::parallel
