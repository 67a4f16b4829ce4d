/* The trainer's model kernels on CUDA: a table the plugin libnubo_cuda.so provides
 * (kernels/plugin/train_api.cpp) and libnubo's trainer loads (lib/train/cuda_kernels.cpp). It sits
 * beside the backend table (nubo_plugin/cuda_plugin_abi.h), not in it: these
 * kernels belong to the trainer, which queues them on the worker's stream like an application's own
 * kernels.
 *
 * Every function takes the device ordinal and the cudaStream_t to queue on (as
 * Worker::native() gives them), returns NUBO_CUDA_CALL_OK or NUBO_CUDA_CALL_FAILED with
 * *status filled, and never throws. The arithmetic is nubo_plugin/math.hpp, shared
 * with the host's table (lib/train/host_kernels.cpp). Compatibility as for the backend table:
 * functions are only appended; a layout change is a new entry point (version 2 left out the
 * optimiser updates, which moved to the backend table's fused optimizer_step). */
#ifndef NUBO_TRAIN_CUDA_KERNELS_ABI_H
#define NUBO_TRAIN_CUDA_KERNELS_ABI_H

#include <stdint.h>

#include "nubo_plugin/cuda_plugin_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NUBO_CUDA_TRAIN_KERNELS_ENTRY "nubo_cuda_train_kernels_v2"
#define NUBO_CUDA_TRAIN_KERNELS_VERSION 2u

typedef struct nubo_cuda_train_kernels {
  uint32_t struct_size;
  uint32_t api_version; /* NUBO_CUDA_TRAIN_KERNELS_VERSION */
  int (*bias_add)(int32_t ordinal, void* stream, float* y, const float* bias, uint64_t rows,
                  uint64_t cols, nubo_cuda_status* st);
  int (*bias_grad)(int32_t ordinal, void* stream, const float* dy, float* dbias, uint64_t rows,
                   uint64_t cols, nubo_cuda_status* st);
  int (*relu)(int32_t ordinal, void* stream, const float* x, float* y, uint64_t n,
              nubo_cuda_status* st);
  int (*relu_grad)(int32_t ordinal, void* stream, const float* x, const float* dy, float* dx,
                   uint64_t n, nubo_cuda_status* st);
  int (*softmax_xent_forward)(int32_t ordinal, void* stream, const float* logits,
                              const int32_t* labels, float* probs, float* loss, uint64_t rows,
                              uint64_t cols, nubo_cuda_status* st);
  int (*softmax_xent_backward)(int32_t ordinal, void* stream, const float* probs,
                               const int32_t* labels, float* dlogits, uint64_t rows, uint64_t cols,
                               float scale, nubo_cuda_status* st);
} nubo_cuda_train_kernels;

typedef const nubo_cuda_train_kernels* (*nubo_cuda_train_kernels_v2_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_TRAIN_CUDA_KERNELS_ABI_H */
