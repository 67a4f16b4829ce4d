#include "train/layout.hpp"

#include <string>

#include "nubo/error.hpp"

namespace nubo::train {

Layout::Layout(std::vector<std::size_t> w) : widths(std::move(w)) {
  if (widths.size() < 2)
    throw Error(Errc::invalid_argument,
                "layer sizes: need at least an input and an output width (e.g. 784,256,10), got " +
                    std::to_string(widths.size()));
  // Bounds keep the sizes below overflow and allocations sane; no MLP for this trainer is wider.
  constexpr std::size_t kMaxWidth = 1u << 20, kMaxParams = std::size_t{1} << 32;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    if (widths[i] == 0 || widths[i] > kMaxWidth)
      throw Error(Errc::invalid_argument, "layer sizes: width " + std::to_string(i) + " is " +
                                              std::to_string(widths[i]) +
                                              "; each must lie in 1 .. 1048576");
  }
  if (widths.back() < 2)
    throw Error(Errc::invalid_argument,
                "layer sizes: the last width is the number of classes and must be at least 2");
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    w_off.push_back(total);
    total += widths[l] * widths[l + 1];
    b_off.push_back(total);
    total += widths[l + 1];
    if (total > kMaxParams)
      throw Error(Errc::invalid_argument, "layer sizes: more than 2^32 parameters");
  }
}

std::vector<BucketRange> plan_buckets(const Layout& layout, std::size_t cap_bytes) {
  std::vector<BucketRange> buckets;
  const std::size_t L = layout.layers();
  std::size_t last = L - 1, bytes = 0;
  for (std::size_t l = L; l-- > 0;) {
    bytes += (layout.in(l)*layout.out(l) + layout.out(l)) * sizeof(float);
    if ((cap_bytes != 0 && bytes >= cap_bytes) || l == 0) {
      BucketRange b;
      b.first = l;
      b.last = last;
      b.begin = layout.w_off[l];
      b.count = layout.b_off[last] + layout.out(last) - b.begin;
      buckets.push_back(b);
      bytes = 0;
      last = l - 1;  // wraps only when l == 0, after which the loop ends
    }
  }
  return buckets;  // in the order backward completes them
}

}  // namespace nubo::train
