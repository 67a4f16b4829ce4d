// all_reduce: every worker's buffer becomes the reduction of all of them.
#include "parallel/collectives/collective.hpp"
#include "parallel/links/reduce.hpp"

namespace nubo::parallel {
namespace {

class AllReduce final : public Collective {
 public:
  void alone(const GroupView& g, int local, const Op& op) const override {
    // One buffer's reduction is itself (avg divides by 1, exactly): nothing to read or write.
    if (g.size == 1) return;
    // Each worker reduces its slice of every buffer and writes it into every buffer.
    const auto n = static_cast<std::size_t>(g.size);
    std::vector<const void*> ins(n);
    std::vector<void*> outs(n);
    for (std::size_t r = 0; r < n; ++r) ins[r] = outs[r] = g.call(static_cast<int>(r)).out;
    const Slice s = slice_of(op.count, g.size, local);
    reduce_ranks(op.type, op.op, ins.data(), g.size, outs.data(), g.size, s.begin, s.count);
  }

  // The process's workers reduce into the leader's buffer, which then goes across processes.
  bool gathers(const GroupView& g) const override { return g.size > 1; }
  void gather(const GroupView& g, int local, const Op& op, ReduceOp first) const override {
    const auto n = static_cast<std::size_t>(g.size);
    std::vector<const void*> ins(n);
    for (std::size_t r = 0; r < n; ++r) ins[r] = g.call(static_cast<int>(r)).out;
    void* lead = g.call(0).out;
    const Slice s = slice_of(op.count, g.size, local);
    reduce_ranks(op.type, first, ins.data(), g.size, &lead, 1, s.begin, s.count);
  }
  Step action(const GroupView& g, const Op& op, ReduceOp last) const override {
    Step a = step_of(StepKind::reduce, op);
    a.in = a.out = g.call(0).out;
    a.op = last;
    return a;
  }
  Region reduced(const GroupView& g, const Op& op) const override {
    return {g.call(0).out, op.count};
  }
  bool spreads(const GroupView& g) const override { return g.size > 1; }
  void spread(const GroupView& g, int local, const Op& op) const override {
    if (local != 0) copy_bytes(op.out, g.call(0).out, op.count * dtype_size(op.type));
  }
};

}  // namespace

const Collective& all_reduce_collective() {
  static const AllReduce c;
  return c;
}

}  // namespace nubo::parallel
