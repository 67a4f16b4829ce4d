// nubo-data-parallel: the smallest data-parallel training loop, computed on each worker's device
// with nubo's own compute calls. A linear model is fitted to a synthetic batch by gradient
// descent: each worker multiplies its shard of the batch on its device (Worker::gemm for the
// predictions, the gradient and the squared error), the workers sum their gradients with one
// all_reduce per step, and every worker applies the same update (Worker::axpy), so their
// weights stay identical.
//
//   NUBO_SIM_DEVICES=4xA100-SXM4-80GB nubo-data-parallel     # 4 simulated GPUs
//   nubo-data-parallel --workers 4                           # 4 workers on the CPU
//   nubo-run --nproc 2 -- nubo-data-parallel --workers 2     # 2 processes x 2 workers
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <random>
#include <vector>

#include "cli.hpp"
#include "nubo/nubo.hpp"

namespace {

constexpr int kFeatures = 8;

// Row i of the synthetic batch (the same on every worker, without communication): features x
// and target y = true_w . x + noise.
void make_row(std::size_t i, float* x, float* y) {
  std::mt19937 rng(static_cast<unsigned>(i) * 7919u + 1u);
  std::normal_distribution<float> d(0.0f, 1.0f);
  float target = 0;
  for (int j = 0; j < kFeatures; ++j) {
    x[j] = d(rng);
    target += static_cast<float>(j + 1) * 0.25f * x[j];  // true weights 0.25, 0.5, ... 2.0
  }
  *y = target + 0.01f * d(rng);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Data-parallel gradient descent on a linear model, with nubo's all_reduce",
               "nubo-data-parallel"};
  int workers = 4, epochs = 20;
  std::size_t rows = 4096;
  float lr = 0.1f;
  app.add_option("--workers", workers, "CPU workers per process when there is no GPU")
      ->check(nubo_cli::Range(1, 64));
  app.add_option("--epochs", epochs, "Gradient steps")->check(nubo_cli::Range(1, 10000));
  app.add_option("--rows", rows, "Rows in the global batch")->check(nubo_cli::Range(1, 10000000));
  nubo_cli::add_version(app, "nubo-data-parallel");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;

  try {
    // Alone: every GPU, else `workers` CPU workers. Under nubo-run with GPUs: the GPU of this
    // process's local rank, as Team::from_env() picks it.
    auto report = nubo::discover();
    const bool in_job = nubo::JobSpec::from_env().world_size > 1;
    nubo::Team team = [&] {
      if (in_job && report.has_gpu()) return nubo::Team::from_env();
      std::vector<nubo::Device> devices;
      if (report.has_gpu()) {
        devices = report.select({.count = 0});
      } else {
        devices.assign(static_cast<std::size_t>(workers), report.host_device());
      }
      return nubo::Team::from_env(devices);
    }();

    std::mutex print;
    std::vector<std::vector<float>> final_w(static_cast<std::size_t>(team.local_size()));
    team.run([&](nubo::Worker& w) {
      if (w.rank() == 0) {
        std::printf("%d workers (%s), %zu rows: each computes the gradient of its rows\n", w.size(),
                    w.device().name.c_str(), rows);
      }
      // This worker's rows, generated locally and copied to its device once.
      const nubo::Shard shard = w.shard(rows);
      const std::size_t n = shard.count, f = kFeatures;
      std::vector<float> hx(n * f), hy(n);
      for (std::size_t r = 0; r < n; ++r) make_row(shard.begin + r, &hx[r * f], &hy[r]);
      auto x = w.alloc<float>(n * f), y = w.alloc<float>(n), err = w.alloc<float>(n);
      x.write(hx);
      y.write(hy);
      auto weights = w.alloc<float>(f);
      w.fill(weights, 0.0);
      // The gradient, plus the squared error as one more element: one all_reduce sums both.
      auto summed = w.alloc<float>(f + 1);
      auto grad = summed.slice(0, f), sq_err = summed.slice(f, 1);
      // Sums over the global batch, divided by its size: each worker's share is already
      // scaled by 1 / rows, so the all-reduce sum is the batch mean.
      const float inv_rows = 1.0f / static_cast<float>(rows);
      for (int epoch = 1; epoch <= epochs; ++epoch) {
        w.gemm({.m = n, .n = 1, .k = f}, x, weights, err);  // predictions X w ...
        w.axpy(-1.0f, y, err);                              // ... minus targets
        // d/dw mean (Xw - y)^2 = 2 X^T err / rows; and the mean squared error err^T err / rows.
        w.gemm({.trans_a = nubo::Transpose::yes, .m = f, .n = 1, .k = n, .alpha = 2 * inv_rows}, x,
               err, grad);
        w.gemm({.trans_a = nubo::Transpose::yes, .m = 1, .n = 1, .k = n, .alpha = inv_rows}, err,
               err, sq_err);
        w.all_reduce(summed, nubo::ReduceOp::sum);
        w.axpy(-lr, grad, weights);
        if (w.rank() == 0 && (epoch == 1 || epoch % 5 == 0)) {
          std::lock_guard<std::mutex> lock(print);
          std::printf("  step %2d: mean squared error %.5f\n", epoch, sq_err.to_vector()[0]);
        }
      }
      final_w[static_cast<std::size_t>(w.local_rank())] = weights.to_vector();
    });

    bool same = true;
    for (const auto& wv : final_w) same = same && wv == final_w[0];
    double dist = 0;
    for (int j = 0; j < kFeatures; ++j) {
      const double d = final_w[0][j] - (j + 1) * 0.25;
      dist += d * d;
    }
    std::printf("weights %s on every worker here; distance to the true weights %.4f\n",
                same ? "identical" : "DIFFERENT", std::sqrt(dist));
    return same ? 0 : 1;
  } catch (const nubo::Error& e) {
    std::fprintf(stderr, "nubo-data-parallel: %s\n", e.what());
    return 1;
  }
}
