// nubo-cuda-stream: an application's own CUDA kernel, on its own stream, feeding nubo's
// all_reduce: the ordering docs/parallel.md gives, both ways.
//  1. Make the application's stream the worker's (Worker::use_stream): everything the worker
//     does, the collective included, queues after the kernel. Nothing else to call.
//  2. Keep the streams apart and order them with an event: record a cudaEvent_t after the
//     kernel, Worker::wait_native_event, then the collective.
// Every GPU of the machine is a worker; each writes rank + 1 into its gradient with a kernel
// that is deliberately slow, so a collective that did not wait would read stale values.
//
//   nubo-cuda-stream            # on a machine with GPUs (without one it says why and exits 0)
#include <cuda_runtime_api.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "nubo/nubo.hpp"
#include "slow_fill.hpp"

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw nubo::Error(nubo::Errc::internal, std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

int main() try {
  const nubo::DeviceReport report = nubo::discover();
  std::vector<nubo::Device> gpus;
  for (const nubo::Device& d : report.devices)
    if (d.backend == nubo::Backend::cuda) gpus.push_back(d);
  if (gpus.empty()) {
    std::printf("nubo-cuda-stream: no CUDA device here, nothing to run:\n");
    for (const nubo::Diagnosis& d : report.diagnoses)
      if (d.severity != nubo::Severity::info)
        std::printf("  [%s] %s\n", d.code.c_str(), d.message.c_str());
    return 0;
  }
  nubo::Team team(gpus);
  const std::size_t n = 1 << 20;
  std::mutex print;
  team.run([&](nubo::Worker& w) {
    const nubo::NativeHandles h = w.native();
    check_cuda(cudaSetDevice(h.device_ordinal), "cudaSetDevice");
    cudaStream_t mine = nullptr;
    cudaEvent_t written = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaEventCreateWithFlags(&written, cudaEventDisableTiming), "cudaEventCreate");
    auto grad = w.alloc<float>(n);
    const float expect = static_cast<float>(w.size() * (w.size() + 1) / 2);
    const auto result = [&] { return grad.to_vector(); };

    // 1. The application's stream becomes the worker's.
    w.use_stream(mine);
    check_cuda(launch_slow_fill(mine, grad.data(), n, static_cast<float>(w.rank() + 1), 1 << 20),
               "slow_fill");
    w.all_reduce(grad, nubo::ReduceOp::sum);
    const float via_stream = result().back();
    w.use_own_stream();

    // 2. Separate streams, ordered by an event.
    check_cuda(launch_slow_fill(mine, grad.data(), n, static_cast<float>(w.rank() + 1), 1 << 20),
               "slow_fill");
    check_cuda(cudaEventRecord(written, mine), "cudaEventRecord");
    w.wait_native_event(written);
    w.all_reduce(grad, nubo::ReduceOp::sum);
    const float via_event = result().back();

    {
      std::lock_guard<std::mutex> lock(print);
      std::printf("rank %d (%s): use_stream gives %.0f, an event gives %.0f, expected %.0f\n",
                  w.rank(), w.device().name.c_str(), via_stream, via_event, expect);
    }
    cudaEventDestroy(written);
    cudaStreamDestroy(mine);
    if (via_stream != expect || via_event != expect)
      throw nubo::Error(nubo::Errc::internal,
                        "a collective read the gradient before the "
                        "application's kernel had written it");
  });
  std::printf("the all-reduce saw every kernel's result, both ways\n");
  return 0;
} catch (const nubo::Error& e) {
  std::fprintf(stderr, "nubo-cuda-stream: %s\n", e.what());
  return 1;
}
