// A small run of the sharded optimizer that in-process tests and the cross-process peer share:
// deterministic gradients per rank and step over a model of given slices, and the parameters it
// ends with (f32, without padding), so that runs of different stages and world sizes compare.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "nubo/optimizer.hpp"

namespace nubo_test {

// Rank r's gradient of element i at step t. same_on_every_rank: a function of (i, t) only, so
// that the average over any power-of-two world is exact and runs of different sizes compare
// bit for bit.
inline float sharded_gradient(std::size_t i, int rank, int t, bool same_on_every_rank) {
  const double x = static_cast<double>(i) * 0.37 + t * 1.3 + (same_on_every_rank ? 0 : rank * 0.7);
  // The same on every rank: a whole number of 1/128 up to 1/4, so that the sums of up to four
  // of them are exact even in bf16.
  if (same_on_every_rank) return static_cast<float>(std::round(std::sin(x) * 32) / 128);
  return static_cast<float>(std::sin(x) * 0.25);
}

inline std::vector<float> initial_parameters(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(std::cos(static_cast<double>(i) * 0.11) * 0.5);
  return v;
}

// Writes the model's values (f32, slice after slice) into a flat buffer of the layout, in its
// precision, padding zeroed.
inline void write_flat(nubo::Worker& w, const nubo::ShardLayout& layout,
                       const std::vector<float>& values, nubo::DeviceBuffer& flat) {
  std::vector<float> padded(layout.padded_size(), 0.0f);
  std::size_t at = 0;
  for (std::size_t s = 0; s < layout.slices(); ++s)
    for (std::size_t i = 0; i < layout.size(s); ++i) padded[layout.offset(s) + i] = values[at++];
  auto staged = w.alloc<float>(padded.size());
  staged.write(std::span<const float>(padded));
  w.cast(staged, flat);
}

inline std::vector<float> read_flat(nubo::Worker& w, const nubo::ShardLayout& layout,
                                    const nubo::DeviceBuffer& flat) {
  auto staged = w.alloc<float>(layout.padded_size());
  w.cast(flat, staged);
  const auto padded = staged.to_vector();
  std::vector<float> out;
  for (std::size_t s = 0; s < layout.slices(); ++s)
    for (std::size_t i = 0; i < layout.size(s); ++i) out.push_back(padded[layout.offset(s) + i]);
  return out;
}

struct ShardedRun {
  nubo::ShardedOptions options;
  std::vector<std::size_t> slices = {1000};
  int steps = 5;
  bool same_on_every_rank = false;
  int first_step = 1;  // for a resumed run: the gradients continue from here
};

// Builds the optimizer, runs the steps (stage 3 gathering every slice before "using" it), and
// returns the parameters it ends with.
inline std::vector<float> run_sharded(nubo::Worker& w, const ShardedRun& run,
                                      const std::string& load_from = "",
                                      const std::string& save_to = "") {
  using namespace nubo;
  const ShardLayout layout = ShardedOptimizer::layout_for(run.options, w.size(), run.slices);
  const DType grad_type = run.options.precision;
  DeviceBuffer params = w.alloc(grad_type, layout.padded_size());
  write_flat(w, layout, initial_parameters(layout.parameters()), params);
  ShardedOptimizer opt(w, params, run.options, run.slices);
  if (!load_from.empty()) opt.load(load_from);
  DeviceBuffer grads = w.alloc(grad_type, layout.padded_size());
  for (int t = run.first_step; t < run.first_step + run.steps; ++t) {
    std::vector<float> g(layout.parameters());
    for (std::size_t i = 0; i < g.size(); ++i)
      g[i] = sharded_gradient(i, w.rank(), t, run.same_on_every_rank);
    write_flat(w, layout, g, grads);
    if (run.options.stage == 3)
      for (std::size_t s = 0; s < layout.slices(); ++s) {
        if (s + 1 < layout.slices()) opt.prefetch(s + 1);
        DeviceBuffer p = opt.gather(s);
        (void)p;
        opt.release(s);
      }
    opt.step(grads);
  }
  if (!save_to.empty()) opt.save(save_to);
  return opt.state().master;
}

}  // namespace nubo_test
