// On a real GPU: the ordering rule of docs/parallel.md holds under load. An application kernel
// on its own stream writes a buffer late (it spins first); a collective that copies the buffer
// (all_gather) must see the new values every time, across 1000 iterations, when the worker
// uses the application's stream (use_stream) and when the streams are ordered by an event
// (wait_native_event). A third, unordered run shows that the check can see staleness at all.
// Without a GPU it exits 77, which CTest reports as skipped.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "../../../examples/cuda/slow_fill.hpp"
#include "nubo/nubo.hpp"

namespace {

constexpr int kIterations = 1000;
constexpr std::size_t kCount = 1 << 16;
constexpr long long kSpin = 20000;  // clock cycles: about 10-20 us on current GPUs

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw nubo::Error(nubo::Errc::internal, std::string(what) + ": " + cudaGetErrorString(e));
}

enum class Order { stream, event, none };

// Stale results seen in `iterations` rounds of kernel, all_gather, check.
int stale_rounds(nubo::Worker& w, Order order, int iterations) {
  check(cudaSetDevice(w.native().device_ordinal), "cudaSetDevice");
  cudaStream_t mine = nullptr;
  cudaEvent_t written = nullptr;
  check(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreateWithFlags(&written, cudaEventDisableTiming), "cudaEventCreate");
  auto in = w.alloc<float>(kCount);
  auto out = w.alloc<float>(kCount * static_cast<std::size_t>(w.size()));
  if (order == Order::stream) w.use_stream(mine);
  int stale = 0;
  std::vector<float> host(out.size());
  for (int it = 1; it <= iterations; ++it) {
    const float value = static_cast<float>(it);
    check(launch_slow_fill(mine, in.data(), kCount, value, kSpin), "slow_fill");
    if (order == Order::event) {
      check(cudaEventRecord(written, mine), "cudaEventRecord");
      w.wait_native_event(written);
    }
    w.all_gather(in, out);
    out.read(std::span<float>(host));
    bool fresh = true;
    for (std::size_t i = 0; i < host.size(); i += 997) fresh = fresh && host[i] == value;
    if (!fresh) ++stale;
    // Let the application's stream finish before the next round rewrites `in`.
    check(cudaStreamSynchronize(mine), "cudaStreamSynchronize");
  }
  w.use_own_stream();
  cudaEventDestroy(written);
  cudaStreamDestroy(mine);
  return stale;
}

}  // namespace

int main() try {
  std::vector<nubo::Device> gpus;
  for (const nubo::Device& d : nubo::discover().devices)
    if (d.backend == nubo::Backend::cuda) gpus.push_back(d);
  if (gpus.empty()) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  nubo::Team team(gpus);
  std::mutex mutex;
  int stale_stream = 0, stale_event = 0, stale_none = 0;
  team.run([&](nubo::Worker& w) {
    const int s = stale_rounds(w, Order::stream, kIterations);
    const int e = stale_rounds(w, Order::event, kIterations);
    const int n = stale_rounds(w, Order::none, 50);
    std::lock_guard<std::mutex> lock(mutex);
    stale_stream += s;
    stale_event += e;
    stale_none += n;
  });
  std::printf(
      "stale results in %d rounds per GPU on %zu GPU(s): use_stream %d, event %d; "
      "unordered (control, 50 rounds) %d\n",
      kIterations, gpus.size(), stale_stream, stale_event, stale_none);
  return stale_stream == 0 && stale_event == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "stream_order_test: %s\n", e.what());
  return 1;
}
