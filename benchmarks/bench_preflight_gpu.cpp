// The preflight on a real GPU against the peer a user would reach for, in the same run:
//  - GEMM (bf16, f16, tf32, f32 at 8192^3) against cublasGemmEx called directly;
//  - device memory bandwidth against a plain cudaMemcpy device-to-device loop;
//  - pinned host-to-device and device-to-host against cudaMemcpy from cudaHostAlloc memory.
// The goal is nubo / peer >= 0.95 for each figure: the preflight measures what the GPU does,
// not its own overhead. Rounds alternate nubo and the peer; the table gives medians.
// Usage: bench_preflight_gpu [--rounds N] [--budget SECONDS] [--out FILE]
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_checks.hpp"
#include "nubo/nubo.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Seconds per call: two warm-up calls, then calls until `slice` seconds have passed.
template <class Call>
double per_call(double slice, cudaStream_t stream, Call&& call) {
  call();
  call();
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const auto t0 = Clock::now();
  int reps = 0;
  double wall = 0;
  do {
    call();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    ++reps;
    wall = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (wall < slice);
  return wall / reps;
}

// The peer figures, measured as a user would with the CUDA runtime and cuBLAS alone.
std::map<std::string, double> peer_figures(double slice) {
  std::map<std::string, double> out;
  cudaStream_t stream{};
  cublasHandle_t blas{};
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUBLAS(cublasCreate(&blas));
  CHECK_CUBLAS(cublasSetStream(blas, stream));
  const int n = 8192;
  const std::size_t elems = std::size_t{n} * n;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK_CUDA(cudaMalloc(&a, elems * 4));
  CHECK_CUDA(cudaMalloc(&b, elems * 4));
  CHECK_CUDA(cudaMalloc(&c, elems * 4));
  CHECK_CUDA(cudaMemset(a, 0, elems * 4));
  CHECK_CUDA(cudaMemset(b, 0, elems * 4));
  struct Kind {
    const char* check;
    cudaDataType_t type;
    cublasComputeType_t compute;
  };
  const Kind kinds[] = {{"gemm-bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F},
                        {"gemm-f16", CUDA_R_16F, CUBLAS_COMPUTE_32F},
                        {"gemm-tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
                        {"gemm-f32", CUDA_R_32F, CUBLAS_COMPUTE_32F}};
  const float alpha = 1.0f / n, beta = 0;
  for (const auto& k : kinds) {
    const double s = per_call(slice, stream, [&] {
      CHECK_CUBLAS(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b, k.type, n, a,
                                k.type, n, &beta, c, k.type, n, k.compute, CUBLAS_GEMM_DEFAULT));
    });
    out[k.check] = 2.0 * n * double(n) * n / s / 1e12;
  }
  // Copies as the preflight makes them: 512 MiB between two buffers of their own.
  const std::size_t bytes = std::size_t{512} << 20;
  void *from = nullptr, *to = nullptr, *pinned = nullptr;
  CHECK_CUDA(cudaMalloc(&from, bytes));
  CHECK_CUDA(cudaMalloc(&to, bytes));
  CHECK_CUDA(cudaMemset(from, 0x5a, bytes));
  out["memory-bandwidth"] =
      2.0 * bytes /
      per_call(
          slice, stream,
          [&] { CHECK_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream)); }) /
      1e9;
  CHECK_CUDA(cudaHostAlloc(&pinned, bytes, cudaHostAllocPortable));
  std::memset(pinned, 0x5a, bytes);
  out["host-to-device"] =
      bytes /
      per_call(
          slice, stream,
          [&] { CHECK_CUDA(cudaMemcpyAsync(to, pinned, bytes, cudaMemcpyHostToDevice, stream)); }) /
      1e9;
  out["device-to-host"] =
      bytes /
      per_call(slice, stream,
               [&] {
                 CHECK_CUDA(cudaMemcpyAsync(pinned, from, bytes, cudaMemcpyDeviceToHost, stream));
               }) /
      1e9;
  cudaFree(from);
  cudaFree(to);
  cudaFreeHost(pinned);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cublasDestroy(blas);
  cudaStreamDestroy(stream);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) try {
  int rounds = 3;
  double budget = 15;
  std::string out_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--budget"))
      budget = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--out"))
      out_path = argv[i + 1];
  }
  nubo::DiscoverOptions discover;
  discover.sim_devices = "";
  const auto report = nubo::discover(discover);
  if (report.devices.empty() || report.devices[0].backend != nubo::Backend::cuda) {
    std::cout << "bench_preflight_gpu: no CUDA device; nothing to measure\n";
    return 0;
  }
  nubo::device::PreflightOptions options;
  options.devices = {0};
  options.budget_seconds = budget;
  options.host = false;
  std::map<std::string, std::vector<double>> nubo_runs, peer_runs;
  std::map<std::string, double> expected;
  nubo::device::PreflightReport last;
  for (int r = 0; r < rounds; ++r) {
    last = nubo::device::preflight(report, options);
    for (const auto& m : last.measurements) {
      nubo_runs[m.check].push_back(m.measured);
      expected[m.check] = m.expected;
    }
    for (const auto& [check, value] : peer_figures(budget / 12)) peer_runs[check].push_back(value);
  }
  std::ostringstream table;
  table << "GPU: " << report.devices[0].name << " (" << report.devices[0].model << "), driver "
        << report.driver.driver_release << "\n\n"
        << "| check | nubo preflight | peer (CUDA/cuBLAS direct) | nubo / peer | expected | "
           "nubo / expected |\n|---|---:|---:|---:|---:|---:|\n";
  char line[256];
  for (const auto& [check, runs] : nubo_runs) {
    const double ours = median(runs), peer = median(peer_runs[check]);
    std::snprintf(line, sizeof line, "| %s | %.1f | %.1f | %.3f | %.1f | %.2f |\n", check.c_str(),
                  ours, peer, peer > 0 ? ours / peer : 0.0, expected[check],
                  expected[check] > 0 ? ours / expected[check] : 0.0);
    table << line;
  }
  table << "\nUnits: TFLOP/s for GEMM (8192^3), GB/s for copies (512 MiB; device-to-device counts "
           "bytes read and written). Medians of "
        << rounds << " rounds, nubo and the peer alternating; preflight budget " << budget
        << " s per round.\nLast verdict: " << nubo::device::verdict_name(last.verdict) << "\n";
  std::cout << table.str();
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << "# The preflight on a real GPU against CUDA and cuBLAS called directly\n\n"
        << "Command: `benchmarks/gpu_check.sh` (bench_preflight_gpu --rounds " << rounds
        << " --budget " << budget << ")\n\n"
        << table.str() << "\nThe last round's report:\n\n```json\n"
        << last.to_json() << "\n```\n";
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_preflight_gpu: " << e.what() << "\n";
  return 1;
}
