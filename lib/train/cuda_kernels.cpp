// The model's kernels on CUDA: the plugin's train-kernel table
// (nubo_plugin/cuda_kernels_abi.h), called with the worker's device ordinal and
// its stream in use at each call, so they queue in order with the worker's GEMMs and collectives,
// and follow Worker::use_stream.
#include <dlfcn.h>

#include <cstddef>

#include "device/cuda/cuda_backend_errors.hpp"
#include "device/cuda/cuda_backend_plugin.hpp"
#include "nubo_plugin/cuda_kernels_abi.h"
#include "nubo_plugin/math.hpp"
#include "train/kernels.hpp"

namespace nubo::train {
namespace {

const nubo_cuda_train_kernels* load_table() {
  const detail::CudaBackendPlugin plugin = detail::load_cuda_backend_plugin();
  const auto entry = reinterpret_cast<nubo_cuda_train_kernels_v2_fn>(
      dlsym(plugin.library, NUBO_CUDA_TRAIN_KERNELS_ENTRY));
  const nubo_cuda_train_kernels* t = entry ? entry() : nullptr;
  if (!t || t->api_version != NUBO_CUDA_TRAIN_KERNELS_VERSION ||
      t->struct_size < offsetof(nubo_cuda_train_kernels, softmax_xent_backward) +
                           sizeof t->softmax_xent_backward)
    throw Error(Errc::unavailable, plugin.path + " has no trainer kernels (" +
                                       NUBO_CUDA_TRAIN_KERNELS_ENTRY +
                                       " version 2): a plugin of another nubo; rebuild it");
  return t;
}

class CudaKernels final : public Kernels {
 public:
  explicit CudaKernels(Worker& w) : w_(w), t_(load_table()) {}

  void bias_add(float* y, const float* bias, std::size_t rows, std::size_t cols) override {
    call("bias_add", [&](int o, void* s, nubo_cuda_status* st) {
      return t_->bias_add(o, s, y, bias, rows, cols, st);
    });
  }
  void bias_grad(const float* dy, float* dbias, std::size_t rows, std::size_t cols) override {
    call("bias_grad", [&](int o, void* s, nubo_cuda_status* st) {
      return t_->bias_grad(o, s, dy, dbias, rows, cols, st);
    });
  }
  void relu(const float* x, float* y, std::size_t n) override {
    call("relu", [&](int o, void* s, nubo_cuda_status* st) { return t_->relu(o, s, x, y, n, st); });
  }
  void relu_grad(const float* x, const float* dy, float* dx, std::size_t n) override {
    call("relu_grad", [&](int o, void* s, nubo_cuda_status* st) {
      return t_->relu_grad(o, s, x, dy, dx, n, st);
    });
  }
  void softmax_xent_forward(const float* logits, const std::int32_t* labels, float* probs,
                            float* loss, std::size_t rows, std::size_t cols) override {
    call("softmax_xent_forward", [&](int o, void* s, nubo_cuda_status* st) {
      return t_->softmax_xent_forward(o, s, logits, labels, probs, loss, rows, cols, st);
    });
  }
  void softmax_xent_backward(const float* probs, const std::int32_t* labels, float* dlogits,
                             std::size_t rows, std::size_t cols, float scale) override {
    call("softmax_xent_backward", [&](int o, void* s, nubo_cuda_status* st) {
      return t_->softmax_xent_backward(o, s, probs, labels, dlogits, rows, cols, scale, st);
    });
  }

 private:
  template <class Launch>
  void call(const char* what, Launch launch) {
    const NativeHandles h = w_.native();
    nubo_cuda_status st{};
    if (launch(h.device_ordinal, h.cuda_stream, &st) != NUBO_CUDA_CALL_OK)
      detail::throw_cuda(st,
                         "cuda " + std::to_string(h.device_ordinal) + ": trainer kernel " + what);
  }

  Worker& w_;
  const nubo_cuda_train_kernels* t_;
};

}  // namespace

std::unique_ptr<Kernels> cuda_kernels(Worker& w) {
  return std::make_unique<CudaKernels>(w);
}

}  // namespace nubo::train
