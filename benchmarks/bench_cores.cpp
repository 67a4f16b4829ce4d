// What two cores give two host workers: the GEMMs of nubo-train's first layer (128 x 784 by
// 784 x 256, f32) on one worker alone against two workers at once, each on one thread (its
// share of a 2-core machine), interleaved round by round. On dedicated cores the two workers
// together do twice the work per second; the ratio is the most 2 workers can gain on this
// machine, whatever the trainer does. Usage: OPENBLAS_NUM_THREADS=1 bench_cores [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "nubo/nubo.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kM = 128, kN = 256, kK = 784;
constexpr int kIterations = 400;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds for kIterations GEMMs on every worker of the team at once.
double round_of(nubo::Team& team) {
  std::vector<double> seconds(static_cast<std::size_t>(team.local_size()));
  team.run([&](nubo::Worker& w) {
    auto a = w.alloc<float>(kM * kK), b = w.alloc<float>(kK * kN), c = w.alloc<float>(kM * kN);
    w.fill(a, 0.5);
    w.fill(b, 0.25);
    w.gemm({.m = kM, .n = kN, .k = kK}, a, b, c);  // warm
    w.barrier();
    const auto t0 = Clock::now();
    for (int i = 0; i < kIterations; ++i) w.gemm({.m = kM, .n = kN, .k = kK}, a, b, c);
    seconds[static_cast<std::size_t>(w.local_rank())] =
        std::chrono::duration<double>(Clock::now() - t0).count();
  });
  return *std::max_element(seconds.begin(), seconds.end());
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  nubo::DiscoverOptions o;
  o.probe_cuda = false;
  o.sim_devices = "";
  const nubo::Device cpu = nubo::discover(o).host_device();
  nubo::Team one({cpu}), two({cpu, cpu});
  std::printf("threads per worker: alone %d, two at once %d\n", one.worker(0).host_threads(),
              two.worker(0).host_threads());
  std::vector<double> alone, together;
  for (int r = 0; r < rounds; ++r) {
    alone.push_back(round_of(one));
    together.push_back(round_of(two));
  }
  const double flops = 2.0 * kM * kN * kK * kIterations;
  const double a = flops / median(alone) / 1e9, t = 2 * flops / median(together) / 1e9;
  std::printf("| one worker alone | two workers at once | two / one |\n|---|---|---|\n");
  std::printf("| %.1f GFLOP/s | %.1f GFLOP/s | %.2f |\n", a, t, t / a);
  return 0;
}
