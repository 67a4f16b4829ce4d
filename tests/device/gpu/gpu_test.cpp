// On a real GPU, through the public API: Worker::gemm in f32, f16 and bf16 against a host
// worker; a CUDA worker's buffers as DLPack tensors on the GPU and its native handles; and the
// trainer's CUDA kernel table against the host's. Without a GPU each case warns and returns.
#include <dlpack/dlpack.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include "skip.hpp"

#include "nubo/nubo.hpp"
#include "train/kernels.hpp"

using namespace nubo;

namespace {

std::vector<Device> cuda_devices() {
#ifdef NUBO_TEST_CUDA_PLUGIN
  ::setenv("NUBO_CUDA_PLUGIN", NUBO_TEST_CUDA_PLUGIN, 0);
#endif
  std::vector<Device> out;
  for (const Device& d : discover().devices)
    if (d.backend == Backend::cuda) out.push_back(d);
  return out;
}

std::vector<float> values(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  unsigned s = seed;
  // Multiples of 1/8 in [-2, 2): exact in f16 and bf16, so only the sums round.
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>(s >> 27) - 16) / 8.0f;
  }
  return v;
}

// The same GEMM on a worker; C read back as floats.
template <class T>
std::vector<float> gemm_on(Worker& w, const Gemm& g, const std::vector<float>& a,
                           const std::vector<float>& b) {
  auto conv = [](const std::vector<float>& v) {
    std::vector<T> out;
    for (float x : v) out.push_back(T(x));
    return out;
  };
  auto da = w.alloc<T>(a.size()), db = w.alloc<T>(b.size()), dc = w.alloc<T>(g.m * g.n);
  da.write(conv(a));
  db.write(conv(b));
  w.gemm(g, da, db, dc);
  std::vector<float> out;
  for (const T& x : dc.to_vector()) out.push_back(static_cast<float>(x));
  return out;
}

}  // namespace

TEST_CASE("GPU: Worker::gemm in f32, f16 and bf16 matches a host worker", "[gpu]") {
  const auto gpus = cuda_devices();
  if (gpus.empty()) {
    NUBO_SKIP("no CUDA device here");
  }
  Team gpu({gpus[0]});
  Team cpu({discover().host_device()});
  const Gemm g{.trans_a = Transpose::yes, .m = 96, .n = 80, .k = 200, .alpha = 0.5f};
  const auto a = values(g.m * g.k, 1), b = values(g.k * g.n, 2);
  std::vector<std::vector<float>> on_gpu, on_cpu;
  gpu.run([&](Worker& w) {
    on_gpu = {gemm_on<float>(w, g, a, b), gemm_on<half>(w, g, a, b), gemm_on<bfloat16>(w, g, a, b)};
  });
  cpu.run([&](Worker& w) {
    on_cpu = {gemm_on<float>(w, g, a, b), gemm_on<half>(w, g, a, b), gemm_on<bfloat16>(w, g, a, b)};
  });
  // Both accumulate in f32 (in their own orders) and round once: f32 within 1e-5 relative,
  // the 16-bit types within one rounding of their own.
  const double rel[] = {1e-5, 0x1p-10, 0x1p-7};
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t i = 0; i < on_cpu[t].size(); ++i)
      REQUIRE(on_gpu[t][i] == Approx(on_cpu[t][i]).epsilon(rel[t]).margin(rel[t]));
}

TEST_CASE("GPU: a CUDA worker's buffers are DLPack tensors on its GPU", "[gpu]") {
  const auto gpus = cuda_devices();
  if (gpus.empty()) {
    NUBO_SKIP("no CUDA device here");
  }
  Team team({gpus[0]});
  team.run([&](Worker& w) {
    const NativeHandles h = w.native();
    CHECK(h.cuda_stream != nullptr);
    CHECK(h.cublas_handle != nullptr);
    CHECK(h.nccl_comm != nullptr);
    CHECK(h.device_ordinal == gpus[0].ordinal);
    auto buf = w.alloc<float>(16);
    w.fill(buf, 2.0);
    DLManagedTensor* t = buf.to_dlpack();
    CHECK(t->dl_tensor.device.device_type == kDLCUDA);
    CHECK(t->dl_tensor.device.device_id == gpus[0].ordinal);
    auto back = w.from_dlpack(t);
    w.scale(back, 3.0f);
    CHECK(buf.to_vector() == std::vector<float>(16, 6.0f));
    auto wrapped = w.wrap(buf.data(), DType::f32, 16);  // device memory: accepted
    std::vector<float> host(4);
    CHECK_THROWS_AS(w.wrap(std::span<float>(host)), Error);  // host memory: refused
    Event e = w.record_event();
    e.synchronize();
    CHECK(e.done());
    CHECK(e.native() != nullptr);
  });
}

TEST_CASE("GPU: the trainer's CUDA kernels match the host's", "[gpu]") {
  const auto gpus = cuda_devices();
  if (gpus.empty()) {
    NUBO_SKIP("no CUDA device here");
  }
  Team team({gpus[0]});
  const std::size_t rows = 300, cols = 37, n = rows * cols;
  auto x = values(n, 21);
  x[5] = 0.0f;  // ReLU at 0
  const auto dy = values(n, 22), bias = values(cols, 23);
  std::vector<std::int32_t> labels(rows);
  for (std::size_t r = 0; r < rows; ++r) labels[r] = static_cast<std::int32_t>((r * 7) % cols);
  labels[3] = -1;  // a bad label: NaN loss on both

  // The same sequence through each device's table, on that worker's buffers.
  std::vector<std::vector<float>> on_gpu, on_cpu;
  auto collect = [&](Worker& w, train::Kernels& k, std::vector<std::vector<float>>& out) {
    auto alloc = [&](const std::vector<float>& init) {
      auto b = w.alloc<float>(init.size());
      b.write(init);
      return b;
    };
    auto dx = alloc(x), ddy = alloc(dy), db = alloc(bias), o = alloc(std::vector<float>(n));
    auto grad = alloc(std::vector<float>(cols)), probs = alloc(std::vector<float>(n));
    auto loss = alloc(std::vector<float>(rows)), m = alloc(std::vector<float>(n, 0.0f));
    auto v = alloc(std::vector<float>(n, 0.0f));
    auto lab = w.alloc<std::int32_t>(rows);
    lab.write(labels);
    const auto read = [&](Buffer<float>& b) {
      w.synchronize();
      return b.to_vector();
    };
    k.relu(dx.data(), o.data(), n);
    out.push_back(read(o));
    k.relu_grad(dx.data(), ddy.data(), o.data(), n);
    out.push_back(read(o));
    k.bias_add(ddy.data(), db.data(), rows, cols);
    out.push_back(read(ddy));
    k.bias_grad(ddy.data(), grad.data(), rows, cols);
    out.push_back(read(grad));
    k.softmax_xent_forward(dx.data(), lab.data(), probs.data(), loss.data(), rows, cols);
    out.push_back(read(probs));
    out.push_back(read(loss));
    k.softmax_xent_backward(probs.data(), lab.data(), o.data(), rows, cols, 1.0f / rows);
    out.push_back(read(o));
    DeviceBuffer none;
    w.optimizer_step({.kind = OptimizerKind::sgd, .lr = 0.1f, .weight_decay = 1e-4f}, dx, o, m,
                     none);
    out.push_back(read(dx));
    w.optimizer_step({.kind = OptimizerKind::adamw, .weight_decay = 0.01f}, dx, o, m, v);
    out.push_back(read(dx));
    // The mixed-precision kernels: a bf16 copy of the gradients, the fused update from it with
    // its bf16 copy of the weights, and the unscale's finite check and sum of squares.
    auto o16 = w.alloc<bfloat16>(n), dx16 = w.alloc<bfloat16>(n);
    auto back = w.alloc<float>(n);
    w.cast(o, o16);
    w.optimizer_step({.kind = OptimizerKind::adam, .weight_decay = 0.01f}, dx, o16, m, v, &dx16);
    w.cast(dx16, back);
    out.push_back(read(back));
    auto stats = w.alloc<float>(2);
    w.fill(stats, 0.0);
    w.unscale_check(o16, 0.5f, stats);
    out.push_back({read(stats)[0]});
  };
  team.run([&](Worker& w) {
    auto k = train::kernels_for(w);
    collect(w, *k, on_gpu);
  });
  Team cpu({discover().host_device()});
  cpu.run([&](Worker& w) {
    auto k = train::kernels_for(w);
    collect(w, *k, on_cpu);
  });
  const char* names[] = {"relu",
                         "relu_grad",
                         "bias_add",
                         "bias_grad",
                         "softmax probs",
                         "softmax loss",
                         "softmax backward",
                         "sgd",
                         "adam",
                         "adam from bf16",
                         "unscale_check finite"};
  REQUIRE(on_gpu.size() == on_cpu.size());
  for (std::size_t t = 0; t < on_cpu.size(); ++t) {
    INFO(names[t]);
    for (std::size_t i = 0; i < on_cpu[t].size(); ++i) {
      if (std::isnan(on_cpu[t][i])) {
        REQUIRE(std::isnan(on_gpu[t][i]));
        continue;
      }
      REQUIRE(on_gpu[t][i] == Approx(on_cpu[t][i]).epsilon(1e-5).margin(1e-6));
    }
  }
}
