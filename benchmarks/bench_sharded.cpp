// The sharded optimizer measured (benchmarks/bench_sharded.sh runs it):
//
//   bench_sharded memory PARAMS
//       per worker, for 1, 2 and 4 simulated A100 workers in one process and each ZeRO stage
//       (bf16 parameters, Adam): what the worker's device holds (bytes_in_use) with the buffers
//       an application keeps at that stage, against sharded_memory's formula. One markdown row
//       per (workers, stage).
//   bench_sharded step STAGE PARAMS STEPS [WIRE] [DEVICES]
//       one worker per process (under nubo-run), or DEVICES in this process ("cuda:0,1");
//       STEPS steps of Adam on PARAMS f32 parameters in 8 slices, each reduced as "backward"
//       produces it; prints one JSON line: median step, the wait for the reductions, the
//       update (with stage 1-2's all-gather), and the bytes handed to the collectives.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "nubo/nubo.hpp"

using namespace nubo;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<Device> sim(int n) {
  DiscoverOptions o;
  o.probe_cuda = false;
  o.sim_devices = "8xA100-SXM4-80GB";
  auto r = discover(o);
  return {r.devices.begin(), r.devices.begin() + n};
}

int memory(std::size_t params) {
  std::printf(
      "| workers | stage | held (measured) | formula | measured / formula | "
      "application's buffers | optimizer's |\n|---|---|---|---|---|---|---|\n");
  const std::size_t slices_n = 16;
  std::vector<std::size_t> slices(slices_n, params / slices_n);
  for (int workers : {1, 2, 4}) {
    for (int stage : {0, 1, 2, 3}) {
      Team team(sim(workers));
      std::mutex m;
      team.run([&](Worker& w) {
        ShardedOptions o;
        o.optimizer = OptimizerKind::adam;
        o.stage = stage;
        o.precision = DType::bf16;
        const ShardLayout layout = ShardedOptimizer::layout_for(o, w.size(), slices);
        const std::size_t base = w.bytes_in_use();
        DeviceBuffer p = w.alloc(DType::bf16, layout.padded_size());
        w.fill(p, 0.01);
        ShardedOptimizer opt(w, p, o, slices);
        // What the application keeps: stages 0-1 the whole gradient buffer backward writes;
        // stages 2-3 one slice's, reduced and reused slice by slice.
        DeviceBuffer g = w.alloc(DType::bf16, stage < 2 ? layout.padded_size() : layout.padded(0));
        w.fill(g, 0.001);
        if (stage == 3) p = DeviceBuffer();  // stage 3 keeps only its shard
        for (std::size_t s = 0; s < layout.slices(); ++s) {
          DeviceBuffer gs = stage < 2 ? g.slice(layout.offset(s), layout.padded(s))
                                      : g.slice(0, layout.padded(s));
          opt.reduce(s, gs);
          if (stage >= 2) opt.wait_reductions();  // the slice's buffer is reused next
        }
        opt.step();
        const double held = static_cast<double>(w.bytes_in_use() - base);
        const double bucket = stage < 2 ? 0.0 : static_cast<double>(g.bytes());
        const ShardedMemory f =
            sharded_memory(static_cast<double>(params), stage, o.optimizer, o.precision, w.size());
        if (w.rank() == 0) {
          const std::lock_guard<std::mutex> lock(m);
          std::printf("| %d | %d | %.1f MB | %.1f MB | %.3f | %s | %.1f MB |\n", workers, stage,
                      (held - bucket) / 1e6, f.total() / 1e6, (held - bucket) / f.total(),
                      stage < 2 ? "parameters, gradients"
                                : (stage == 2 ? "parameters (+ one slice's gradients, not counted)"
                                              : "one slice's gradients, not counted"),
                      f.optimizer / 1e6);
        }
      });
    }
  }
  return 0;
}

int step(int stage, std::size_t params, int steps, const std::string& wire,
         const std::string& devices) {
  Team team = devices.empty() ? Team::join() : Team(devices_from_spec(devices, "DEVICES"));
  std::mutex m;
  team.run([&](Worker& w) {
    ShardedOptions o;
    o.optimizer = OptimizerKind::adam;
    o.stage = stage;
    o.wire = wire.empty() ? DType::f32 : parse_dtype(wire);
    const std::vector<std::size_t> slices(8, params / 8);
    const ShardLayout layout = ShardedOptimizer::layout_for(o, w.size(), slices);
    DeviceBuffer p = w.alloc(DType::f32, layout.padded_size());
    DeviceBuffer g = w.alloc(DType::f32, layout.padded_size());
    w.fill(p, 0.01);
    ShardedOptimizer opt(w, p, o, slices);
    std::vector<double> total, wait, update;
    for (int t = 0; t < steps + 2; ++t) {
      w.fill(g, 0.001 * (t + 1));
      w.synchronize();
      const auto t0 = Clock::now();
      for (std::size_t s = layout.slices(); s-- > 0;) {  // backward's order: last slice first
        DeviceBuffer gs = g.slice(layout.offset(s), layout.padded(s));
        opt.reduce(s, gs);
      }
      const auto t1 = Clock::now();
      opt.wait_reductions();
      const double waited = since(t1);
      const auto t2 = Clock::now();
      opt.step();
      w.synchronize();
      if (t >= 2) {  // the first two warm the caches and the links
        wait.push_back(waited);
        update.push_back(since(t2));
        total.push_back(since(t0));
      }
    }
    if (w.rank() == 0) {
      const std::lock_guard<std::mutex> lock(m);
      std::printf(
          "{\"stage\": %d, \"workers\": %d, \"params\": %zu, \"wire\": \"%s\", "
          "\"step_ms\": %.3f, \"reduce_wait_ms\": %.3f, \"update_ms\": %.3f, "
          "\"bytes_per_step\": %.0f, \"optimizer_bytes\": %zu}\n",
          stage, w.size(), params, wire.empty() ? "f32" : wire.c_str(), median(total) * 1e3,
          median(wait) * 1e3, median(update) * 1e3,
          static_cast<double>(opt.bytes_communicated()) / (steps + 2), w.bytes_in_use());
      std::fflush(stdout);
    }
  });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "memory" && argc > 2) return memory(std::stoull(argv[2]));
    if (mode == "step" && argc > 4)
      return step(std::atoi(argv[2]), std::stoull(argv[3]), std::atoi(argv[4]),
                  argc > 5 && std::string(argv[5]) != "f32" ? argv[5] : "",
                  argc > 6 ? argv[6] : "");
    std::fprintf(stderr,
                 "usage: bench_sharded memory PARAMS | step STAGE PARAMS STEPS [WIRE] [DEVICES]\n");
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_sharded: %s\n", e.what());
    return 1;
  }
}
