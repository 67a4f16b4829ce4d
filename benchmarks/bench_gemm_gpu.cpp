// GPU benchmarks for benchmarks/gpu_check.sh, on the first CUDA device, through the public
// Worker API as an application uses it:
//  1. Worker::gemm (-> plugin -> cublasGemmEx) against cublasGemmEx called directly on the
//     same buffers: what nubo's layer costs.
//  2. The data-parallel step of a linear layer on a team of one GPU: the weight gradient
//     (dW = X^T dY over the batch) and its all-reduce, through nubo (Worker::gemm +
//     Worker::all_reduce on NCCL) against cuBLAS + ncclAllReduce directly.
//  3. NCCL all-reduce, 1 KB to 256 MB, through Worker::all_reduce against ncclAllReduce.
// Times are wall-clock around a batch of calls ended by a stream synchronisation, best of
// three rounds, the two sides interleaved. Usage: bench_gemm_gpu [--out FILE] [--quick]
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_checks.hpp"
#include "nubo/nubo.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nubo::DType;

#define CHECK_NCCL(x)                                                          \
  do {                                                                         \
    const ncclResult_t r_ = (x);                                               \
    if (r_ != ncclSuccess)                                                     \
      throw std::runtime_error(#x ": " + std::string(ncclGetErrorString(r_))); \
  } while (0)

// Seconds per call: `reps` calls then `sync`, best of `rounds`.
template <class Call, class Sync>
double per_call(int reps, int rounds, Call&& call, Sync&& sync) {
  call();
  sync();
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) call();
    sync();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / reps);
  }
  return best;
}

cudaDataType_t cuda_type(DType t) {
  return t == DType::f32 ? CUDA_R_32F : t == DType::f16 ? CUDA_R_16F : CUDA_R_16BF;
}
ncclDataType_t nccl_type(DType t) {
  return t == DType::f32 ? ncclFloat32 : t == DType::f16 ? ncclFloat16 : ncclBfloat16;
}

struct Raw {  // the baseline: cuBLAS and NCCL called directly, on their own stream
  cudaStream_t stream{};
  cublasHandle_t blas{};
  ncclComm_t comm{};
  explicit Raw(int ordinal) {
    CHECK_CUDA(cudaSetDevice(ordinal));
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_CUBLAS(cublasCreate(&blas));
    CHECK_CUBLAS(cublasSetStream(blas, stream));
    int dev = ordinal;
    CHECK_NCCL(ncclCommInitAll(&comm, 1, &dev));
  }
  ~Raw() {
    ncclCommDestroy(comm);
    cublasDestroy(blas);
    cudaStreamDestroy(stream);
  }
  void sync() { CHECK_CUDA(cudaStreamSynchronize(stream)); }
  // Row-major C = op(A) B as nubo's plugin issues it (column-major C^T = B^T op(A)^T).
  void gemm(const nubo::Gemm& g, DType t, const void* a, const void* b, void* c) {
    const float alpha = g.alpha, beta = g.beta;
    const int lda = static_cast<int>(g.trans_a == nubo::Transpose::yes ? g.m : g.k);
    CHECK_CUBLAS(cublasGemmEx(
        blas, CUBLAS_OP_N, g.trans_a == nubo::Transpose::yes ? CUBLAS_OP_T : CUBLAS_OP_N,
        static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k), &alpha, b,
        cuda_type(t), static_cast<int>(g.n), a, cuda_type(t), lda, &beta, c, cuda_type(t),
        static_cast<int>(g.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
};

std::string fmt(const char* f, double a, double b, double c) {
  char buf[128];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string out_path;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
  }
#ifdef NUBO_BENCH_CUDA_PLUGIN
  // The plugin of this build, unless the caller names another.
  ::setenv("NUBO_CUDA_PLUGIN", NUBO_BENCH_CUDA_PLUGIN, 0);
#endif
  const nubo::DeviceReport report = nubo::discover();
  const nubo::Device* gpu = nullptr;
  for (const auto& d : report.devices)
    if (d.backend == nubo::Backend::cuda && !gpu) gpu = &d;
  if (!gpu) {
    std::cout << "bench_gemm_gpu: no CUDA device; nothing to measure\n";
    for (const auto& d : report.diagnoses)
      std::cout << "  [" << d.code << "] " << d.message << "\n";
    return 0;
  }
  nubo::Team team({*gpu});
  Raw raw(gpu->ordinal);
  const int rounds = 3;
  std::ostringstream md;
  md << "GPU: " << gpu->name << " (cuda " << gpu->ordinal << ")\n\n";
  team.run([&](nubo::Worker& w) {
    // 1. GEMM.
    struct G {
      DType t;
      std::size_t m, n, k;
    };
    std::vector<G> gemms = {{DType::f32, 1024, 1024, 1024},
                            {DType::f32, 4096, 4096, 4096},
                            {DType::f16, 4096, 4096, 4096},
                            {DType::bf16, 4096, 4096, 4096},
                            {DType::bf16, 8192, 8192, 8192}};
    if (quick) gemms.resize(2);
    md << "| GEMM (row-major, fp32 accumulate) | cuBLAS TFLOP/s | nubo TFLOP/s | nubo / cuBLAS "
          "|\n"
       << "|---|---:|---:|---:|\n";
    for (const G& s : gemms) {
      auto a = w.alloc(s.t, s.m * s.k), b = w.alloc(s.t, s.k * s.n), c = w.alloc(s.t, s.m * s.n);
      // Zeroed inputs would flatter the tensor cores (less switching); fill with small values.
      w.fill(a, 0.0078125);
      w.fill(b, 0.0078125);
      const nubo::Gemm g{.m = s.m, .n = s.n, .k = s.k};
      const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
      const int reps = std::max(3, static_cast<int>(2e13 / flops / (s.t == DType::f32 ? 20 : 1)));
      double t_raw = 1e30, t_nubo = 1e30;
      for (int round = 0; round < rounds; ++round) {
        t_raw =
            std::min(t_raw, per_call(
                                reps, 1, [&] { raw.gemm(g, s.t, a.data(), b.data(), c.data()); },
                                [&] { raw.sync(); }));
        t_nubo =
            std::min(t_nubo, per_call(
                                 reps, 1, [&] { w.gemm(g, a, b, c); }, [&] { w.synchronize(); }));
      }
      md << "| " << nubo::dtype_name(s.t) << " " << s.m << "x" << s.n << "x" << s.k
         << fmt(" | %.1f | %.1f | %.3f |\n", flops / t_raw / 1e12, flops / t_nubo / 1e12,
                t_raw / t_nubo);
    }

    // 2. Data-parallel step of a linear layer (team of one): dW = X^T dY, then all-reduce dW.
    {
      const std::size_t batch = quick ? 2048 : 8192, in = 4096, out = 4096;
      const DType t = DType::bf16;
      auto x = w.alloc(t, batch * in), dy = w.alloc(t, batch * out), dw = w.alloc(t, in * out);
      w.fill(x, 0.0078125);
      w.fill(dy, 0.0078125);
      const nubo::Gemm g{.trans_a = nubo::Transpose::yes, .m = in, .n = out, .k = batch};
      const int reps = 10;
      double t_raw = 1e30, t_nubo = 1e30;
      for (int round = 0; round < rounds; ++round) {
        t_raw = std::min(
            t_raw, per_call(
                       reps, 1,
                       [&] {
                         raw.gemm(g, t, x.data(), dy.data(), dw.data());
                         CHECK_NCCL(ncclAllReduce(dw.data(), dw.data(), in * out, nccl_type(t),
                                                  ncclSum, raw.comm, raw.stream));
                       },
                       [&] { raw.sync(); }));
        t_nubo = std::min(t_nubo, per_call(
                                      reps, 1,
                                      [&] {
                                        w.gemm(g, x, dy, dw);
                                        w.all_reduce(dw, nubo::ReduceOp::sum);
                                      },
                                      [&] { w.synchronize(); }));
      }
      const double flops = 2.0 * double(batch) * double(in) * double(out);
      md << "\n| data-parallel step, 1 GPU: dW = X^T dY (bf16, batch " << batch
         << ", 4096x4096) + all-reduce dW | cuBLAS+NCCL ms | nubo ms | nubo / direct |\n"
         << "|---|---:|---:|---:|\n"
         << fmt("| GEMM %.0f TFLOP/s direct | %.3f | %.3f |", flops / t_raw / 1e12, t_raw * 1e3,
                t_nubo * 1e3)
         << fmt(" %.3f |\n", t_raw / t_nubo, 0, 0);
    }

    // 3. All-reduce bandwidth on one GPU (busbw = algbw x 2(n-1)/n is 0 for n = 1: one GPU
    // measures the call's fixed cost and its local copy, not a link).
    md << "\n| all-reduce f32 sum, 1 GPU | NCCL us | nubo us | NCCL algbw GB/s | nubo algbw GB/s "
          "|\n"
       << "|---|---:|---:|---:|---:|\n";
    const std::size_t max_bytes = quick ? (std::size_t{16} << 20) : (std::size_t{256} << 20);
    auto whole = w.alloc<float>(max_bytes / 4);
    w.fill(whole, 1.0);
    for (std::size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
      const std::size_t count = bytes / 4;
      auto buf = whole.slice(0, count);
      const int reps = bytes < (std::size_t{1} << 20) ? 200 : 20;
      double t_raw = 1e30, t_nubo = 1e30;
      for (int round = 0; round < rounds; ++round) {
        t_raw = std::min(t_raw,
                         per_call(
                             reps, 1,
                             [&] {
                               CHECK_NCCL(ncclAllReduce(buf.data(), buf.data(), count, ncclFloat32,
                                                        ncclSum, raw.comm, raw.stream));
                             },
                             [&] { raw.sync(); }));
        // nubo's blocking form waits for each collective, as a training step does.
        t_nubo = std::min(t_nubo, per_call(
                                      reps, 1, [&] { w.all_reduce(buf, nubo::ReduceOp::sum); },
                                      [&] { w.synchronize(); }));
      }
      char label[32];
      if (bytes >= (std::size_t{1} << 20))
        std::snprintf(label, sizeof label, "%zu MB", bytes >> 20);
      else
        std::snprintf(label, sizeof label, "%zu KB", bytes >> 10);
      md << "| " << label
         << fmt(" | %.1f | %.1f | %.1f", t_raw * 1e6, t_nubo * 1e6, double(bytes) / t_raw / 1e9)
         << fmt(" | %.1f |\n", double(bytes) / t_nubo / 1e9, 0, 0);
    }
  });

  std::cout << md.str();
  if (!out_path.empty()) {
    std::ofstream f(out_path);
    f << "# GPU: nubo's Worker::gemm and all-reduce against cuBLAS and NCCL\n\n"
      << "Written by `benchmarks/gpu_check.sh` (`bench_gemm_gpu`). Wall-clock per call over a "
         "batch of calls ended by a stream synchronisation, best of three interleaved rounds. "
         "nubo's all-reduce is its blocking form (it waits for each collective, polling for "
         "errors and the timeout); the direct NCCL column only enqueues.\n\n"
      << md.str();
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_gemm_gpu: " << e.what() << "\n";
  return 1;
}
