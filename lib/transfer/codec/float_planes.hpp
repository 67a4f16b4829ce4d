// Byte planes of float tensors, the transform of the `float` codec. In a tensor of bf16, fp16
// or fp32 values the byte holding the sign and the exponent takes few values (weights cluster
// around a few magnitudes), while the mantissa bytes look random; interleaved, they defeat a
// general compressor, and zstd saves little on model weights. Split into planes (every value's
// first byte, then every second byte ...), the exponent plane compresses well and the rest is
// no worse: this is what ZipNN (Hershcovitch et al., 2024) builds on. The transform is exact
// for every bit pattern (NaNs, infinities, denormals): it only moves bytes.
#pragma once

#include <cstddef>

#include "transfer/bytes.hpp"

namespace nubo::transfer {

struct PlaneStats {
  int stride = 2;           // 2 (bf16, fp16) or 4 (fp32): the element width that fits best
  bool float_like = false;  // one plane is far more predictable than the bytes as a whole
};
// Judged from the bytes' histograms (cheap: no compression), on a sample of a chunk.
PlaneStats plane_stats(Bytes sample) noexcept;

// raw's first size - size % stride bytes as `stride` planes, then the rest as it is, into out
// (raw.size() bytes); join_planes undoes it.
void split_planes(Bytes raw, int stride, std::byte* out) noexcept;
void join_planes(Bytes planes, int stride, std::byte* out) noexcept;

}  // namespace nubo::transfer
