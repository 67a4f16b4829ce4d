// ShardLayout: slices padded to whole aligned shards.
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

}  // namespace nubo
