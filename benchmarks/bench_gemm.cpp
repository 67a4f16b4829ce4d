// Worker::gemm on a host worker against calling OpenBLAS directly: what nubo's public compute
// API costs on the CPU, and what f16 and bf16 cost next to f32. f32 runs cblas_sgemm on the same
// buffers both ways (nubo's wrapping the application's arrays, as an application would),
// interleaved in slices within each round; the table gives the median GFLOP/s over rounds and
// the median of the per-round ratios (1.00 = no overhead). Usage:
//   bench_gemm [--out FILE] [--quick]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "nubo/nubo.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  const char* what;
  std::size_t m, n, k;
  bool trans_a;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Mean time of `reps` runs of f.
template <class F>
double mean_of(int reps, F&& f) {
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) f();
  return seconds_since(t0) / reps;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else {
      std::cerr << "usage: bench_gemm [--out FILE] [--quick]\n";
      return 2;
    }
  }
  const std::vector<Shape> shapes = {
      {"square", 64, 64, 64, false},
      {"square", 256, 256, 256, false},
      {"square", 512, 512, 512, false},
      {"square", 1024, 1024, 1024, false},
      {"layer fwd: batch 256, 784->512", 256, 512, 784, false},
      {"layer grad: W^T-shaped, 784x512 over batch 256", 784, 512, 256, true},
      {"skinny: batch 32, 4096->10", 32, 10, 4096, false}};
  const int rounds = quick ? 3 : 7;

  nubo::Team team({nubo::discover().host_device()});
  std::ostringstream table;
  table << "| shape | m x n x k | OpenBLAS f32 GFLOP/s | nubo f32 GFLOP/s | nubo / OpenBLAS | "
           "nubo bf16 GFLOP/s | nubo f16 GFLOP/s |\n"
        << "|---|---|---:|---:|---:|---:|---:|\n";
  team.run([&](nubo::Worker& w) {
    for (const Shape& s : shapes) {
      std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n, 0.0f);
      auto wa = w.wrap(std::span<float>(a)), wb = w.wrap(std::span<float>(b)),
           wc = w.wrap(std::span<float>(c));
      auto a16 = w.alloc<nubo::bfloat16>(a.size()), b16 = w.alloc<nubo::bfloat16>(b.size()),
           c16 = w.alloc<nubo::bfloat16>(c.size());
      auto ah = w.alloc<nubo::half>(a.size()), bh = w.alloc<nubo::half>(b.size()),
           ch = w.alloc<nubo::half>(c.size());
      for (auto* buf :
           {static_cast<nubo::DeviceBuffer*>(&a16), static_cast<nubo::DeviceBuffer*>(&b16),
            static_cast<nubo::DeviceBuffer*>(&ah), static_cast<nubo::DeviceBuffer*>(&bh)})
        w.fill(*buf, 0.5);
      const nubo::Gemm g{.trans_a = s.trans_a ? nubo::Transpose::yes : nubo::Transpose::no,
                         .m = s.m,
                         .n = s.n,
                         .k = s.k};
      const double flops =
          2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
      const int lda = static_cast<int>(s.trans_a ? s.m : s.k);
      const auto direct = [&] {
        cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans,
                    static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k), 1.0f,
                    a.data(), lda, b.data(), static_cast<int>(s.n), 0.0f, c.data(),
                    static_cast<int>(s.n));
      };
      const auto via_nubo = [&] { w.gemm(g, wa, wb, wc); };
      const auto bf16 = [&] { w.gemm(g, a16, b16, c16); };
      const auto f16 = [&] { w.gemm(g, ah, bh, ch); };
      // Enough repetitions for ~0.1 s per side and round (less with --quick), at least 2.
      direct();
      const auto t0 = Clock::now();
      direct();
      const double once = std::max(seconds_since(t0), 1e-7);
      const int reps = std::max(2, static_cast<int>((quick ? 0.02 : 0.1) / once));
      via_nubo(), bf16(), f16();  // warm-up
      std::vector<double> t_direct, t_nubo, t_bf16, t_f16;
      for (int r = 0; r < rounds; ++r) {
        t_direct.push_back(mean_of(reps, direct));
        t_nubo.push_back(mean_of(reps, via_nubo));
        t_bf16.push_back(mean_of(std::max(1, reps / 2), bf16));
        t_f16.push_back(mean_of(std::max(1, reps / 2), f16));
      }
      const double d = median(t_direct), n = median(t_nubo);
      char row[320];
      std::snprintf(row, sizeof row,
                    "| %s | %zu x %zu x %zu | %.1f | %.1f | %.2f | %.1f | %.1f |\n", s.what, s.m,
                    s.n, s.k, flops / d / 1e9, flops / n / 1e9, d / n, flops / median(t_bf16) / 1e9,
                    flops / median(t_f16) / 1e9);
      table << row;
    }
  });
  std::cout << table.str();
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << "# Worker::gemm on the CPU vs OpenBLAS\n\n"
        << "`benchmarks/bench_gemm.sh` on this machine: row-major GEMM through the public\n"
        << "`Worker::gemm` of a host worker, on buffers wrapping the application's arrays, "
           "against\n"
        << "`cblas_sgemm` called directly on the same arrays. Medians over " << rounds
        << " rounds, the two f32 sides alternating in ten slices within each round (the ratio is "
           "the median of the per-round ratios); "
        << openblas_get_config() << ", " << openblas_get_num_threads() << " threads.\n\n"
        << table.str()
        << "\nf32 is the same cblas_sgemm call behind argument checks: a ratio of 1.00 means the\n"
        << "layer costs nothing measurable. This OpenBLAS has no cblas_sbgemm (Debian builds it\n"
        << "without BUILD_BFLOAT16), so bf16 and f16 are widened to f32 in blocks, multiplied by\n"
        << "cblas_sgemm and rounded back once; their extra cost is the conversion, which weighs\n"
        << "most on the small and skinny shapes.\n";
  }
  return 0;
}
