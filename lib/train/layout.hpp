// Where each parameter tensor lives in the flat parameter vector (checkpoint order: W0, b0, W1,
// b1, ...; W_l is in_l x out_l row-major), and how the gradients are cut into buckets.
#pragma once

#include <cstddef>
#include <vector>

namespace nubo::train {

struct Layout {
  std::vector<std::size_t> widths;  // input first, classes last
  std::vector<std::size_t> w_off, b_off;
  std::size_t total = 0;  // parameters

  // Throws invalid_argument for fewer than two widths, a width of 0, or a model too large.
  explicit Layout(std::vector<std::size_t> widths);
  std::size_t layers() const { return widths.size() - 1; }
  std::size_t in(std::size_t l) const { return widths[l]; }
  std::size_t out(std::size_t l) const { return widths[l + 1]; }
};

// A bucket is layers [first, last] of the model: a contiguous range of the flat vector, since
// W_l, b_l, W_{l+1}, ... follow each other. Backward produces layer `last` first and `first`
// last, so the bucket is complete (and its all-reduce may start) once layer `first` is done.
struct BucketRange {
  std::size_t first = 0, last = 0;   // layers
  std::size_t begin = 0, count = 0;  // in the flat vector
};

// Walks the layers from the last to the first, closing a bucket once it holds at least
// `cap_bytes` of fp32 gradients (as PyTorch DDP's bucket_cap_mb). cap_bytes 0: one bucket.
std::vector<BucketRange> plan_buckets(const Layout& layout, std::size_t cap_bytes);

}  // namespace nubo::train
