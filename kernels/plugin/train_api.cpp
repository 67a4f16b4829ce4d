// The trainer's kernel table (nubo_plugin/cuda_kernels_abi.h): the model kernels
// of train_kernels.cu, each queued on the stream the caller names (the worker's stream in use) on
// the device it names.
#include <cuda_runtime_api.h>

#include "nubo_plugin/cuda_kernels_abi.h"
#include "plugin_status.hpp"
#include "train_kernels.hpp"

namespace nubo::cuda_plugin {
namespace {

// Sets the device, then launches; the launch's error, as a status.
template <class Launch>
int on(int32_t ordinal, const char* what, nubo_cuda_status* st, Launch launch) {
  if (int rc = check_cuda(cudaSetDevice(ordinal), "cudaSetDevice", st)) return rc;
  return check_cuda(launch(), what, st);
}

cudaStream_t stream_of(void* s) {
  return static_cast<cudaStream_t>(s);
}

int bias_add(int32_t o, void* s, float* y, const float* bias, uint64_t rows, uint64_t cols,
             nubo_cuda_status* st) {
  return on(o, "bias_add kernel", st,
            [&] { return launch_bias_add(stream_of(s), y, bias, rows, cols); });
}

int bias_grad(int32_t o, void* s, const float* dy, float* dbias, uint64_t rows, uint64_t cols,
              nubo_cuda_status* st) {
  return on(o, "bias_grad kernel", st,
            [&] { return launch_bias_grad(stream_of(s), dy, dbias, rows, cols); });
}

int relu(int32_t o, void* s, const float* x, float* y, uint64_t n, nubo_cuda_status* st) {
  return on(o, "relu kernel", st, [&] { return launch_relu(stream_of(s), x, y, n); });
}

int relu_grad(int32_t o, void* s, const float* x, const float* dy, float* dx, uint64_t n,
              nubo_cuda_status* st) {
  return on(o, "relu_grad kernel", st,
            [&] { return launch_relu_grad(stream_of(s), x, dy, dx, n); });
}

int softmax_xent_forward(int32_t o, void* s, const float* logits, const int32_t* labels,
                         float* probs, float* loss, uint64_t rows, uint64_t cols,
                         nubo_cuda_status* st) {
  return on(o, "softmax_xent_forward kernel", st, [&] {
    return launch_softmax_xent_forward(stream_of(s), logits, labels, probs, loss, rows, cols);
  });
}

int softmax_xent_backward(int32_t o, void* s, const float* probs, const int32_t* labels,
                          float* dlogits, uint64_t rows, uint64_t cols, float scale,
                          nubo_cuda_status* st) {
  return on(o, "softmax_xent_backward kernel", st, [&] {
    return launch_softmax_xent_backward(stream_of(s), probs, labels, dlogits, rows, cols, scale);
  });
}

nubo_cuda_train_kernels make_table() {
  nubo_cuda_train_kernels t{};
  t.struct_size = sizeof t;
  t.api_version = NUBO_CUDA_TRAIN_KERNELS_VERSION;
  t.bias_add = bias_add;
  t.bias_grad = bias_grad;
  t.relu = relu;
  t.relu_grad = relu_grad;
  t.softmax_xent_forward = softmax_xent_forward;
  t.softmax_xent_backward = softmax_xent_backward;
  return t;
}

}  // namespace
}  // namespace nubo::cuda_plugin

extern "C" __attribute__((visibility("default"))) const nubo_cuda_train_kernels*
nubo_cuda_train_kernels_v2() noexcept {
  static const nubo_cuda_train_kernels table = nubo::cuda_plugin::make_table();
  return &table;
}
