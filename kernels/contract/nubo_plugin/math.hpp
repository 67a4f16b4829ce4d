// The arithmetic of nubo's built-in kernels, written once for both sides: the host and sim
// backends (lib/device/host/host_backend.cpp) call these functions in plain loops, and the CUDA
// kernels (kernels/kernels.cu) call the same functions per thread. The CPU tests therefore check
// the arithmetic the GPU runs; only the loop structure (and, for the row reductions of softmax,
// the order of the additions) differs between the two.
//
// Rules for this file: header-only, no standard library beyond <cmath>/<cstdint> functions
// that nvcc supports in device code, everything NUBO_HD inline, fp32 in and out.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define NUBO_HD __host__ __device__
#else
#define NUBO_HD
#endif

namespace nubo::math {

// --- Elementwise ------------------------------------------------------------------------

NUBO_HD inline float relu(float x) {
  return x > 0.0f ? x : 0.0f;
}

// The derivative at exactly 0 is taken as 0 (PyTorch does the same). NaN inputs give 0 too.
NUBO_HD inline float relu_grad(float x, float dy) {
  return x > 0.0f ? dy : 0.0f;
}

// Two roundings, product then sum, on both sides: nvcc would otherwise contract this into one
// fused multiply-add, which the host (built without FMA) cannot match bit for bit.
NUBO_HD inline float axpy(float alpha, float x, float y) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(alpha, x), y);
#else
  return alpha * x + y;
#endif
}

// --- Softmax cross-entropy --------------------------------------------------------------
// For a row of logits z with maximum M: softmax(z)_i = exp(z_i - M) / S with
// S = sum_j exp(z_j - M), and the loss for label y is log(S) - (z_y - M). Subtracting M keeps
// every exponent <= 0, so nothing overflows, and S >= 1, so log(S) is finite.

NUBO_HD inline float max_of(float a, float b) {
  return a > b ? a : b;
}

// One term of S.
NUBO_HD inline float shifted_exp(float z, float row_max) {
  return expf(z - row_max);
}

NUBO_HD inline float softmax_prob(float z, float row_max, float sum_exp) {
  return expf(z - row_max) / sum_exp;
}

// Cross-entropy of one row from its maximum, its S and the label's logit. The shifted logit
// z_y - M is formed first: it is small where the loss is, whereas log(S) + M would round the
// loss to the coarse spacing of floats near M (about 1e-3 when M is 1e4).
NUBO_HD inline float xent_loss(float row_max, float sum_exp, float label_logit) {
  return logf(sum_exp) - (label_logit - row_max);
}

NUBO_HD inline bool label_ok(std::int32_t label, std::int64_t cols) {
  return label >= 0 && label < cols;
}

// d(loss * scale)/dz_i = (p_i - [i == label]) * scale.
NUBO_HD inline float xent_grad(float prob, bool is_label, float scale) {
  return (is_label ? prob - 1.0f : prob) * scale;
}

// One whole row, sequentially: the host backend's loop, and the reference the GPU's
// warp-parallel version of the same functions must match. Returns the loss; NaN for a bad label.
NUBO_HD inline float softmax_xent_row(const float* z, std::int64_t cols, std::int32_t label,
                                      float* probs) {
  float m = -INFINITY;
  for (std::int64_t i = 0; i < cols; ++i) m = max_of(m, z[i]);
  float s = 0.0f;
  for (std::int64_t i = 0; i < cols; ++i) s += shifted_exp(z[i], m);
  for (std::int64_t i = 0; i < cols; ++i) probs[i] = softmax_prob(z[i], m, s);
  return label_ok(label, cols) ? xent_loss(m, s, z[label]) : NAN;
}

// --- Optimisers -------------------------------------------------------------------------

// SGD with momentum (PyTorch's form): v = mu v + (g + wd w); w -= lr v.
NUBO_HD inline void sgd_momentum_step(float& w, float g, float& v, float lr, float momentum,
                                      float weight_decay) {
  const float d = g + weight_decay * w;
  v = momentum * v + d;
  w -= lr * v;
}

// Adam's per-step constants, computed once per call on the host (in double, so that the bias
// corrections at large t are exact to fp32): c1 = 1 / (1 - b1^t), c2 = 1 / (1 - b2^t).
struct AdamStep {
  float lr, beta1, beta2, eps, weight_decay;
  float c1, c2;
};

inline AdamStep adam_step_constants(float lr, float beta1, float beta2, float eps,
                                    float weight_decay, std::int64_t t) {
  const double td = static_cast<double>(t);
  return AdamStep{lr,
                  beta1,
                  beta2,
                  eps,
                  weight_decay,
                  static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta1), td))),
                  static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta2), td)))};
}

// Adam's moments and update, without weight decay.
NUBO_HD inline void adam_moments_step(float& w, float g, float& m, float& v, const AdamStep& s) {
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  const float m_hat = m * s.c1;
  const float v_hat = v * s.c2;
  w -= s.lr * m_hat / (sqrtf(v_hat) + s.eps);
}

// Adam with decoupled weight decay (AdamW when weight_decay > 0, plain Adam at 0).
NUBO_HD inline void adam_step(float& w, float g, float& m, float& v, const AdamStep& s) {
  w -= s.lr * s.weight_decay * w;
  adam_moments_step(w, g, m, v, s);
}

// Adam with weight decay as an L2 term in the gradient (PyTorch's torch.optim.Adam).
NUBO_HD inline void adam_l2_step(float& w, float g, float& m, float& v, const AdamStep& s) {
  adam_moments_step(w, g + s.weight_decay * w, m, v, s);
}

// The optimisers of the fused update (DeviceBackend::optimizer_step), by kind.
enum OptimizerKind : std::int32_t { kSgd = 0, kAdam = 1, kAdamW = 2 };

// One fused update's constants: the rule, its hyperparameters (SGD reads lr, momentum and
// weight_decay; Adam the AdamStep), and grad_scale, a factor every gradient is multiplied by
// first (gradient clipping's coefficient; 1 leaves it exact).
struct OptimizerStep {
  std::int32_t kind;
  float momentum;
  AdamStep adam;
  float grad_scale;
};

// One element of the fused update: w (fp32) from its gradient g; m is SGD's velocity or Adam's
// first moment, v Adam's second (SGD does not touch it).
NUBO_HD inline void optimizer_step(float& w, float g, float& m, float& v, const OptimizerStep& s) {
  const float gs = g * s.grad_scale;
  if (s.kind == kSgd)
    sgd_momentum_step(w, gs, m, s.adam.lr, s.momentum, s.adam.weight_decay);
  else if (s.kind == kAdam)
    adam_l2_step(w, gs, m, v, s.adam);
  else
    adam_step(w, gs, m, v, s.adam);
}

}  // namespace nubo::math
