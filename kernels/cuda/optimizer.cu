// The mixed-precision kernels and the fused optimiser update behind DeviceBackend's cast,
// unscale_check and optimizer_step: grid-stride loops around nubo_plugin/math.hpp, so the
// update is the arithmetic the host backend's loops run (the CPU tests check it).
#include <type_traits>

#include "float_types.cuh"
#include "grid.cuh"
#include "nubo_plugin/math.hpp"
#include "optimizer.hpp"

namespace nubo::cuda_plugin {
namespace {

template <class From, class To>
__global__ void cast_k(const From* src, To* dst, std::uint64_t n) {
  NUBO_GRID_LOOP(i, n) dst[i] = store<To>(load(src[i]));
}

template <class From>
struct CastFrom {
  template <class To>
  struct To_ {
    static cudaError_t run(cudaStream_t s, const void* src, void* dst, std::uint64_t n) {
      cast_k<From, To><<<blocks_for(n), kBlock, 0, s>>>(static_cast<const From*>(src),
                                                        static_cast<To*>(dst), n);
      return launched();
    }
  };
  static cudaError_t run(cudaStream_t s, std::int32_t to, const void* src, void* dst,
                         std::uint64_t n) {
    return by_dtype<To_>(to, s, src, dst, n);
  }
};

// Each block sums its squares in shared memory and adds one partial sum atomically (so the sum's
// order, and its last bits, vary from run to run; the finite check does not).
template <class T>
__global__ void unscale_check_k(T* x, std::uint64_t n, float inv_scale, float* stats) {
  __shared__ float partial[kBlock];
  float squares = 0.0f;
  bool finite = true;
  NUBO_GRID_LOOP(i, n) {
    float f = load(x[i]);
    if (inv_scale != 1.0f) {
      x[i] = store<T>(__fmul_rn(f, inv_scale));
      f = load(x[i]);
    }
    finite = finite && isfinite(f);
    squares += f * f;
  }
  if (!finite) stats[0] = 1.0f;
  partial[threadIdx.x] = squares;
  __syncthreads();
  for (unsigned d = kBlock / 2; d > 0; d /= 2) {
    if (threadIdx.x < d) partial[threadIdx.x] += partial[threadIdx.x + d];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(stats + 1, partial[0]);
}

template <class T>
struct UnscaleCheck {
  static cudaError_t run(cudaStream_t s, void* x, std::uint64_t n, float inv_scale, float* stats) {
    unscale_check_k<T><<<blocks_for(n), kBlock, 0, s>>>(static_cast<T*>(x), n, inv_scale, stats);
    return launched();
  }
};

// P is the low-precision copy's type; void: none written.
template <class G, class P>
__global__ void optimizer_k(math::OptimizerStep step, std::uint64_t n, float* master, const G* g,
                            float* m, float* v, P* param) {
  NUBO_GRID_LOOP(i, n) {
    float unused = 0.0f;
    math::optimizer_step(master[i], load(g[i]), m[i], v ? v[i] : unused, step);
    if constexpr (!std::is_void_v<P>) param[i] = store<P>(master[i]);
  }
}

template <class G>
struct OptimizerFor {
  template <class P>
  struct Param {
    static cudaError_t run(cudaStream_t s, const math::OptimizerStep& step, std::uint64_t n,
                           float* master, const void* g, float* m, float* v, void* param) {
      optimizer_k<G, P><<<blocks_for(n), kBlock, 0, s>>>(step, n, master, static_cast<const G*>(g),
                                                         m, v, static_cast<P*>(param));
      return launched();
    }
  };
  static cudaError_t run(cudaStream_t s, const math::OptimizerStep& step, std::uint64_t n,
                         float* master, const void* g, float* m, float* v, std::int32_t param_type,
                         void* param) {
    if (param_type < 0) return Param<void>::run(s, step, n, master, g, m, v, nullptr);
    return by_dtype<Param>(param_type, s, step, n, master, g, m, v, param);
  }
};

}  // namespace

cudaError_t launch_cast(cudaStream_t s, std::int32_t from, const void* src, std::int32_t to,
                        void* dst, std::uint64_t n) {
  if (!float_dtype(from) || !float_dtype(to)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (from == to)
    return src == dst
               ? cudaSuccess
               : cudaMemcpyAsync(dst, src, n * (from == 0 ? 4 : 2), cudaMemcpyDeviceToDevice, s);
  return by_dtype<CastFrom>(from, s, to, src, dst, n);
}

cudaError_t launch_unscale_check(cudaStream_t s, std::int32_t dtype, void* x, std::uint64_t n,
                                 float inv_scale, float* stats) {
  if (!float_dtype(dtype)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  return by_dtype<UnscaleCheck>(dtype, s, x, n, inv_scale, stats);
}

cudaError_t launch_optimizer_step(cudaStream_t s, const math::OptimizerStep& step, std::uint64_t n,
                                  float* master, std::int32_t grad_type, const void* grad, float* m,
                                  float* v, std::int32_t param_type, void* param) {
  if (!float_dtype(grad_type) || (param_type >= 0 && !float_dtype(param_type)))
    return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  return by_dtype<OptimizerFor>(grad_type, s, step, n, master, grad, m, v, param_type, param);
}

}  // namespace nubo::cuda_plugin
