// The memory per worker of each ZeRO stage (nubo/optimizer.hpp): the sharded optimizer's own
// formula, public so that the cost model plans workloads by model with the same one.
#include "nubo/error.hpp"
#include "nubo/optimizer.hpp"

namespace nubo {

ShardedMemory sharded_memory(double parameters, int stage, OptimizerKind kind, DType precision,
                             int world) {
  const auto plan = StagePlan::of(stage, "sharded memory: stage");
  if (world < 1)
    throw Error(Errc::invalid_argument, "sharded memory: world size " + std::to_string(world));
  if (precision != DType::f32 && precision != DType::bf16 && precision != DType::f16)
    throw Error(
        Errc::invalid_argument,
        "sharded memory: precision " + std::string(dtype_name(precision)) + " (f32, bf16 or f16)");
  const double p = static_cast<double>(dtype_size(precision));
  const double state = kind == OptimizerKind::sgd ? 4.0 : 8.0;  // velocity; or m and v
  const double shard = parameters / world;
  ShardedMemory m;
  if (!plan.state_sharded) {
    // Everything replicated; a separate fp32 master only when the model computes in 16 bits.
    m.parameters = p * parameters;
    m.gradients = p * parameters;
    m.optimizer = (state + (precision == DType::f32 ? 0.0 : 4.0)) * parameters;
    return m;
  }
  m.optimizer = (state + 4.0) * shard;  // fp32 master, state
  // The reduced gradient shard; stage 1 also keeps the whole gradient buffer backward writes.
  m.gradients = p * shard + (plan.gradients_sharded ? 0.0 : p * parameters);
  m.parameters = plan.parameters_sharded ? p * shard : p * parameters;
  return m;
}

}  // namespace nubo
