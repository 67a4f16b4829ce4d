// What the CUDA plugin's failures mean: the mapping from (library, result) to nubo's error
// codes and messages, and the CUDA backend wrapper's own bookkeeping, on a fake plugin.
#include <catch2/catch.hpp>

#include <cstring>

#include "device/cuda/cuda_backend_errors.hpp"
#include "fake_plugin.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::testing;

namespace {

nubo_cuda_status status(int32_t library, int32_t result, const char* call = "call",
                        const char* message = "") {
  nubo_cuda_status s{};
  s.library = library;
  s.result = result;
  std::snprintf(s.call, sizeof s.call, "%s", call);
  std::snprintf(s.message, sizeof s.message, "%s", message);
  return s;
}

}  // namespace

TEST_CASE("CUDA runtime errors map to nubo's codes", "[backend][cuda-errors]") {
  using detail::errc_for;
  CHECK(errc_for(status(NUBO_CUDA_LIB_RUNTIME, 2)) == Errc::out_of_memory);
  CHECK(errc_for(status(NUBO_CUDA_LIB_RUNTIME, 35)) == Errc::unavailable);   // no/old driver
  CHECK(errc_for(status(NUBO_CUDA_LIB_RUNTIME, 100)) == Errc::unavailable);  // no device
  CHECK(errc_for(status(NUBO_CUDA_LIB_RUNTIME, 101)) == Errc::unavailable);  // bad ordinal
  CHECK(errc_for(status(NUBO_CUDA_LIB_RUNTIME, 34)) == Errc::unavailable);   // stub libcuda
  CHECK(errc_for(status(NUBO_CUDA_LIB_RUNTIME, 1)) == Errc::invalid_argument);
  CHECK(errc_for(status(NUBO_CUDA_LIB_RUNTIME, 209)) == Errc::unsupported);  // no sm_XX code
  CHECK(errc_for(status(NUBO_CUDA_LIB_RUNTIME, 700)) == Errc::internal);     // illegal address
}

TEST_CASE("cuBLAS errors map to nubo's codes", "[backend][cuda-errors]") {
  using detail::errc_for;
  CHECK(errc_for(status(NUBO_CUDA_LIB_CUBLAS, 3)) == Errc::out_of_memory);
  CHECK(errc_for(status(NUBO_CUDA_LIB_CUBLAS, 7)) == Errc::invalid_argument);
  CHECK(errc_for(status(NUBO_CUDA_LIB_CUBLAS, 15)) == Errc::unsupported);
  CHECK(errc_for(status(NUBO_CUDA_LIB_CUBLAS, 8)) == Errc::unsupported);
  CHECK(errc_for(status(NUBO_CUDA_LIB_CUBLAS, 14)) == Errc::internal);
}

TEST_CASE("NCCL errors map to nubo's codes, with advice", "[backend][cuda-errors][nccl]") {
  using detail::errc_for;
  CHECK(errc_for(status(NUBO_CUDA_LIB_NCCL, 1)) == Errc::unavailable);
  CHECK(errc_for(status(NUBO_CUDA_LIB_NCCL, 2)) == Errc::unavailable);
  CHECK(errc_for(status(NUBO_CUDA_LIB_NCCL, 3)) == Errc::internal);
  CHECK(errc_for(status(NUBO_CUDA_LIB_NCCL, 4)) == Errc::invalid_argument);
  CHECK(errc_for(status(NUBO_CUDA_LIB_NCCL, 5)) == Errc::invalid_argument);
  CHECK(errc_for(status(NUBO_CUDA_LIB_NCCL, 6)) == Errc::unavailable);
  CHECK(errc_for(status(NUBO_CUDA_LIB_NCCL, 7)) == Errc::timeout);
  CHECK(std::string(detail::nccl_result_name(6)) == "ncclRemoteError");
  CHECK(std::string(detail::nccl_result_name(99)) == "ncclResult(unknown)");

  const std::string system =
      detail::describe_status(status(NUBO_CUDA_LIB_NCCL, 2, "ncclCommInitRankConfig", "socket"));
  CHECK_THAT(system, Catch::Contains("ncclCommInitRankConfig failed (ncclSystemError): socket") &&
                         Catch::Contains("NCCL_SOCKET_IFNAME"));
  CHECK_THAT(detail::describe_status(status(NUBO_CUDA_LIB_NCCL, 6)),
             Catch::Contains("A peer rank failed"));
}

TEST_CASE("plugin errors and unterminated text are handled", "[backend][cuda-errors]") {
  CHECK(detail::errc_for(status(NUBO_CUDA_LIB_PLUGIN, NUBO_CUDA_PLUGIN_BAD_ARGUMENT)) ==
        Errc::invalid_argument);
  CHECK(detail::errc_for(status(NUBO_CUDA_LIB_PLUGIN, NUBO_CUDA_PLUGIN_INTERNAL)) ==
        Errc::internal);
  CHECK(detail::errc_for(status(42, 0)) == Errc::internal);
  nubo_cuda_status s{};
  std::memset(s.call, 'c', sizeof s.call);  // no terminator anywhere
  std::memset(s.message, 'm', sizeof s.message);
  s.library = NUBO_CUDA_LIB_RUNTIME;
  const std::string text = detail::describe_status(s);
  CHECK(text.size() < sizeof s.call + sizeof s.message + 32);
  CHECK_THROWS_AS(detail::throw_cuda(s, "here"), Error);
}

TEST_CASE("the CUDA backend names itself and its device in out-of-memory errors",
          "[backend][cuda-errors]") {
  fake() = {};
  auto b = fake_backend(2);
  void* p = b->allocate(1000);
  CHECK(b->bytes_in_use() == 1000);
  fake().out_of_memory = true;
  try {
    b->allocate(1 << 20);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::out_of_memory);
    CHECK_THAT(e.what(), Catch::Contains("cuda 2 (Fake GPU)") &&
                             Catch::Contains("out of memory: asked for 1.0 MiB"));
  }
  CHECK(b->bytes_in_use() == 1000);
  CHECK_FALSE(b->host_accessible());
  CHECK_THROWS_AS(b->free(reinterpret_cast<void*>(0x1000)), Error);
  b->free(p);
  CHECK(b->bytes_in_use() == 0);
  CHECK(b->memory_limit() == (1u << 30));  // the fake's cudaMemGetInfo total
  b.reset();
  CHECK(fake().backends_destroyed == 1);
}

TEST_CASE("the CUDA backend's pinned host memory and copies from a peer GPU",
          "[backend][cuda-errors]") {
  fake() = {};
  auto a = fake_backend(0), b = fake_backend(1);
  constexpr std::size_t kBytes = 4096;
  void* host = b->allocate_host(kBytes);
  REQUIRE(host != nullptr);
  std::memset(host, 0x5a, kBytes);
  void* src = a->allocate(kBytes);
  void* dst = b->allocate(kBytes);
  a->copy_to_device(src, host, kBytes);
  std::memset(host, 0, kBytes);
  b->copy_from_peer(dst, *a, src, kBytes);
  b->copy_to_host(host, dst, kBytes);
  b->synchronize();
  CHECK(static_cast<unsigned char*>(host)[kBytes - 1] == 0x5a);
  bool peer_copy_on_b = false;
  for (const auto& l : fake().launches) peer_copy_on_b |= l.what == "peer_copy";
  CHECK(peer_copy_on_b);
  // A host buffer is not a GPU's memory: refused, naming both devices.
  auto cpu = detail::make_backend(Device{});
  CHECK_THROWS_WITH(
      b->copy_from_peer(dst, *cpu, host, kBytes),
      Catch::Contains("cannot copy from cpu") && Catch::Contains("not a CUDA device"));
  CHECK_THROWS_WITH(cpu->copy_from_peer(host, *b, dst, kBytes),
                    Catch::Contains("its memory is not host memory"));
  b->free_host(host);
  a->free(src);
  b->free(dst);
}

namespace {
// What the plugin's optimizer_step was handed, for the test below.
struct SeenStep {
  nubo_cuda_optimizer_args args{};
  uint64_t n = 0;
  int32_t grad_dtype = -9, param_dtype = -9;
  const void* param = nullptr;
};
SeenStep seen_step;
}  // namespace

TEST_CASE("the fused update reaches the plugin with each constant in its field",
          "[backend][cuda-errors]") {
  fake() = {};
  nubo_cuda_backend_api api = *fake_api();
  api.optimizer_step = [](nubo_cuda_backend*, const nubo_cuda_optimizer_args* a, uint64_t n, float*,
                          int32_t grad_dtype, const void*, float*, float*, int32_t param_dtype,
                          void* param, nubo_cuda_status*) -> int {
    seen_step = {*a, n, grad_dtype, param_dtype, param};
    return NUBO_CUDA_CALL_OK;
  };
  Device d;
  d.backend = Backend::cuda;
  d.name = "Fake GPU";
  nubo_cuda_backend* handle = nullptr;
  nubo_cuda_status st{};
  fakes::create(0, &handle, &st);
  detail::CudaBackend b(d, &api, handle);
  const math::OptimizerStep s{math::kAdamW, 0.5f,
                              math::AdamStep{0.1f, 0.8f, 0.9f, 1e-3f, 0.01f, 2.0f, 3.0f}, 0.25f};
  float master[7], m[7], v[7];
  std::uint16_t grads[7], params[7];
  b.optimizer_step(s, 7, master, DType::bf16, grads, m, v, DType::f16, params);
  const nubo_cuda_optimizer_args& a = seen_step.args;
  CHECK(a.kind == 2);
  CHECK(a.lr == 0.1f);
  CHECK(a.momentum == 0.5f);
  CHECK(a.beta1 == 0.8f);
  CHECK(a.beta2 == 0.9f);
  CHECK(a.eps == 1e-3f);
  CHECK(a.weight_decay == 0.01f);
  CHECK(a.c1 == 2.0f);
  CHECK(a.c2 == 3.0f);
  CHECK(a.grad_scale == 0.25f);
  CHECK(seen_step.n == 7);
  CHECK(seen_step.grad_dtype == 2);
  CHECK(seen_step.param_dtype == 1);
  b.optimizer_step(s, 7, master, DType::f32, grads, m, v, DType::f16, nullptr);
  CHECK(seen_step.param_dtype == -1);  // no low-precision copy
  CHECK(seen_step.param == nullptr);
  CHECK_THROWS_WITH(b.optimizer_step(s, 7, master, DType::i32, grads, m, v, DType::f16, params),
                    Catch::Contains("i32"));
}
