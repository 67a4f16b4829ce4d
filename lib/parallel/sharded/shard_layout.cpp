// ShardLayout: slices padded to whole aligned shards, and the per-stage memory formulas.
#include <limits>

#include "nubo/error.hpp"
#include "nubo/optimizer.hpp"

namespace nubo {
namespace {

std::size_t checked_add(std::size_t a, std::size_t b) {
  if (a > std::numeric_limits<std::size_t>::max() - b)
    throw Error(Errc::invalid_argument,
                "sharded optimizer: the parameters overflow the address space");
  return a + b;
}

}  // namespace

ShardLayout::ShardLayout(std::vector<std::size_t> slice_sizes, int world)
    : world_(world), sizes_(std::move(slice_sizes)) {
  if (world < 1)
    throw Error(Errc::invalid_argument,
                "sharded optimizer: world size " + std::to_string(world) + " (at least 1)");
  const auto w = static_cast<std::size_t>(world);
  for (std::size_t n : sizes_) {
    // ceil(n / w), then up to whole alignment units; computed without overflow for any n.
    const std::size_t per_rank = n / w + (n % w != 0);
    const std::size_t units = per_rank / kAlignment + (per_rank % kAlignment != 0);
    if (units > std::numeric_limits<std::size_t>::max() / kAlignment / w)
      throw Error(Errc::invalid_argument,
                  "sharded optimizer: a slice of " + std::to_string(n) + " elements is too large");
    const std::size_t shard = units * kAlignment;
    shards_.push_back(shard);
    offsets_.push_back(padded_size_);
    shard_offsets_.push_back(shard_size_);
    padded_size_ = checked_add(padded_size_, shard * w);
    shard_size_ = checked_add(shard_size_, shard);
    parameters_ = checked_add(parameters_, n);
  }
}

ShardedMemory sharded_memory(double parameters, int stage, OptimizerKind kind, DType precision,
                             int world) {
  if (stage < 0 || stage > 3)
    throw Error(Errc::invalid_argument,
                "sharded memory: stage " + std::to_string(stage) + " (0 to 3)");
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
  if (stage == 0) {
    // Everything replicated; a separate fp32 master only when the model computes in 16 bits.
    m.parameters = p * parameters;
    m.gradients = p * parameters;
    m.optimizer = (state + (precision == DType::f32 ? 0.0 : 4.0)) * parameters;
    return m;
  }
  m.optimizer = (state + 4.0) * shard;  // fp32 master, state
  // The reduced gradient shard; stage 1 also keeps the whole gradient buffer backward writes.
  m.gradients = p * shard + (stage == 1 ? p * parameters : 0.0);
  m.parameters = stage == 3 ? p * shard : p * parameters;
  return m;
}

}  // namespace nubo
