// barrier: no worker returns before every worker has called it.
#include "parallel/collectives/collective.hpp"

namespace nubo::parallel {
namespace {

class Barrier final : public Collective {
 public:
  // The group's arrival barrier is the whole of it.
  void alone(const GroupView& /*g*/, int /*local*/, const Op& /*op*/) const override {}
  Step action(const GroupView& /*g*/, const Op& op, ReduceOp /*last*/) const override {
    return step_of(StepKind::barrier, op);
  }
};

}  // namespace

const Collective& barrier_collective() {
  static const Barrier c;
  return c;
}

}  // namespace nubo::parallel
