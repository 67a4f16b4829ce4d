// The model's kernels: what the trainer's MLP computes beyond GEMM (which it takes from
// Worker::gemm). The trainer owns this table; each device kind provides it: host and sim with
// loops over nubo_plugin/math.hpp (host_kernels.cpp), CUDA through the plugin's
// train-kernel table (cuda_kernels.cpp), queued on the worker's current stream like an
// application's own kernels. Pointers are memory of the worker's device; sizes are element counts;
// all fp32, labels int32. Arguments come from the trainer's own layout, so they are checked there.
// The optimiser's update is not here: it is Worker::optimizer_step, which every backend has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "nubo/parallel.hpp"

namespace nubo::train {

class Kernels {
 public:
  virtual ~Kernels() = default;
  // y[r][c] += bias[c] for a rows x cols row-major y.
  virtual void bias_add(float* y, const float* bias, std::size_t rows, std::size_t cols) = 0;
  // Sums the rows of dy (rows x cols) into dbias[c]: the gradient of bias_add.
  virtual void bias_grad(const float* dy, float* dbias, std::size_t rows, std::size_t cols) = 0;
  virtual void relu(const float* x, float* y, std::size_t n) = 0;  // y = max(x, 0)
  // dx = x > 0 ? dy : 0 (the gradient at exactly 0 is taken as 0, like PyTorch).
  virtual void relu_grad(const float* x, const float* dy, float* dx, std::size_t n) = 0;
  // For each of `rows` rows of `cols` logits: probs = softmax(logits) and
  // loss[r] = logsumexp(logits[r]) - logits[r][label[r]], computed with the row's maximum
  // subtracted so large logits do not overflow. A label outside [0, cols) gives loss NaN.
  virtual void softmax_xent_forward(const float* logits, const std::int32_t* labels, float* probs,
                                    float* loss, std::size_t rows, std::size_t cols) = 0;
  // dlogits = (probs - onehot(label)) * scale; scale is usually 1 / (global batch size).
  // probs and dlogits may be the same buffer.
  virtual void softmax_xent_backward(const float* probs, const std::int32_t* labels, float* dlogits,
                                     std::size_t rows, std::size_t cols, float scale) = 0;
};

// The table for the worker's device kind. The worker must outlive it (the CUDA table reads
// the worker's current stream at every call). Throws unavailable when the CUDA plugin lacks
// the table.
std::unique_ptr<Kernels> kernels_for(Worker& w);

// The host's table: plain loops, run to completion (also what sim devices use).
std::unique_ptr<Kernels> host_kernels();
// The CUDA table for a worker of a CUDA device (cuda_kernels.cpp).
std::unique_ptr<Kernels> cuda_kernels(Worker& w);

}  // namespace nubo::train
