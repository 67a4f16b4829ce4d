// The model's kernels on the CPU (host and sim workers): loops over
// nubo_plugin/math.hpp, the arithmetic the CUDA kernels share, run to completion
// on the worker's thread.
#include "nubo/error.hpp"
#include "nubo_plugin/math.hpp"
#include "train/kernels.hpp"

namespace nubo::train {
namespace {

class HostKernels final : public Kernels {
 public:
  void bias_add(float* y, const float* bias, std::size_t rows, std::size_t cols) override {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) y[r * cols + c] += bias[c];
  }

  void bias_grad(const float* dy, float* dbias, std::size_t rows, std::size_t cols) override {
    for (std::size_t c = 0; c < cols; ++c) dbias[c] = 0.0f;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) dbias[c] += dy[r * cols + c];
  }

  void relu(const float* x, float* y, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) y[i] = math::relu(x[i]);
  }

  void relu_grad(const float* x, const float* dy, float* dx, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) dx[i] = math::relu_grad(x[i], dy[i]);
  }

  void softmax_xent_forward(const float* logits, const std::int32_t* labels, float* probs,
                            float* loss, std::size_t rows, std::size_t cols) override {
    const auto c = static_cast<std::int64_t>(cols);
    for (std::size_t r = 0; r < rows; ++r)
      loss[r] = math::softmax_xent_row(logits + r * cols, c, labels[r], probs + r * cols);
  }

  void softmax_xent_backward(const float* probs, const std::int32_t* labels, float* dlogits,
                             std::size_t rows, std::size_t cols, float scale) override {
    for (std::size_t r = 0; r < rows; ++r) {
      const std::int64_t label = labels[r];
      for (std::size_t c = 0; c < cols; ++c)
        dlogits[r * cols + c] =
            math::xent_grad(probs[r * cols + c], static_cast<std::int64_t>(c) == label, scale);
    }
  }
};

}  // namespace

std::unique_ptr<Kernels> host_kernels() {
  return std::make_unique<HostKernels>();
}

std::unique_ptr<Kernels> kernels_for(Worker& w) {
  return w.device().backend == Backend::cuda ? cuda_kernels(w) : host_kernels();
}

}  // namespace nubo::train
