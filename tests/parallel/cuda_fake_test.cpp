// A team of "CUDA" workers on the fake plugin (tests/device/backend/fake_plugin.cpp), which runs
// the work on the host and logs every call with the stream it was queued on. This is how a machine
// without a GPU checks the stream contract: after use_stream(s) every call of the worker,
// collectives included, reaches s; an application's event orders the worker's stream; native()
// hands out the stream, cuBLAS handle and NCCL communicator; device memory wraps and imports
// without a copy, and host memory is refused.
#include <dlfcn.h>
#include <dlpack/dlpack.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "../device/backend/fake_plugin.hpp"
#include "nubo/error.hpp"
#include "nubo/parallel.hpp"
#include "nubo/train.hpp"

using namespace nubo;

namespace {

// Points NUBO_CUDA_PLUGIN at the fake for the life of the fixture, and reads its call log.
struct FakeCuda {
  FakeCuda() {
    ::setenv("NUBO_CUDA_PLUGIN", NUBO_FAKE_CUDA_PLUGIN, 1);
    ::unsetenv("NUBO_CUDA");
    // The same handle libnubo gets: dlopen of a loaded file returns it.
    void* lib = dlopen(NUBO_FAKE_CUDA_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    using StateFn = testing::FakeGpu* (*)();
    state = reinterpret_cast<StateFn>(dlsym(lib, "nubo_fake_plugin_state"))();
    *state = {};
  }
  ~FakeCuda() { ::unsetenv("NUBO_CUDA_PLUGIN"); }

  // The streams the calls named `what` went to, in order, since the last clear().
  std::vector<void*> streams_of(const std::string& what) const {
    std::vector<void*> out;
    for (const auto& l : state->launches)
      if (l.what == what) out.push_back(l.stream);
    return out;
  }
  void clear() { state->launches.clear(); }

  testing::FakeGpu* state = nullptr;
};

Device fake_gpu() {
  Device d;
  d.backend = Backend::cuda;
  d.name = "Fake GPU";
  return d;
}

auto invalid(const std::string& says) {
  return Catch::Predicate<Error>(
      [says](const Error& e) {
        return e.code() == Errc::invalid_argument &&
               std::string(e.what()).find(says) != std::string::npos;
      },
      "invalid_argument saying \"" + says + "\"");
}

}  // namespace

TEST_CASE("a CUDA worker queues everything on the stream the application hands it",
          "[parallel][cuda]") {
  FakeCuda fake;
  Team team({fake_gpu()});
  team.run([&](Worker& w) {
    const NativeHandles own = w.native();
    REQUIRE(own.cuda_stream != nullptr);
    CHECK(own.cublas_handle != nullptr);
    CHECK(own.nccl_comm != nullptr);  // the fake's stand-in for its ncclComm_t
    CHECK(own.device_ordinal == 0);

    auto a = w.alloc<float>(4), b = w.alloc<float>(4), c = w.alloc<float>(4);
    char user_stream = 0;  // any address stands for a cudaStream_t to the fake
    fake.clear();
    w.use_stream(&user_stream);
    CHECK(w.native().cuda_stream == &user_stream);
    w.fill(a, 1.0);
    w.fill(b, 2.0);
    w.gemm({.m = 2, .n = 2, .k = 2}, a, b, c);
    w.axpy(1.0f, a, c);
    w.scale(c, 0.5f);
    w.all_reduce(c, ReduceOp::sum);
    auto p = w.all_gather_async(a, b);
    p.wait();
    w.barrier();
    // The switch was ordered after the work queued on the old stream...
    REQUIRE(!fake.state->launches.empty());
    CHECK(fake.state->launches.front().what == "handover");
    CHECK(fake.state->launches.front().stream == own.cuda_stream);
    // ...and everything after it went to the application's stream.
    for (std::size_t i = 1; i < fake.state->launches.size(); ++i) {
      INFO(fake.state->launches[i].what);
      CHECK(fake.state->launches[i].stream == &user_stream);
    }
    CHECK(fake.streams_of("collective").size() == 3);
    CHECK(c.to_vector() == std::vector<float>(4, 2.5f));  // (2 * 2 + 1) / 2

    fake.clear();
    w.use_own_stream();
    w.fill(a, 0.0);
    CHECK(fake.streams_of("fill") == std::vector<void*>{own.cuda_stream});
    CHECK(w.native().cuda_stream == own.cuda_stream);
  });
}

TEST_CASE("an application's event orders a CUDA worker's stream", "[parallel][cuda]") {
  FakeCuda fake;
  Team team({fake_gpu()});
  team.run([&](Worker& w) {
    auto grad = w.alloc<float>(8);
    char app_event = 0;  // a cudaEvent_t the application recorded on its own stream
    fake.clear();
    w.wait_native_event(&app_event);
    w.all_reduce(grad);
    REQUIRE(fake.state->launches.size() >= 2);
    CHECK(fake.state->launches[0].what == "event_wait");
    CHECK(fake.state->launches[1].what == "collective");
    CHECK(fake.state->waited_native == std::vector<void*>{&app_event});
    CHECK_THROWS_MATCHES(w.wait_native_event(nullptr), Error, invalid("the CUDA event is null"));
    Event e = w.record_event();
    CHECK(e.native() != nullptr);  // a cudaEvent_t the application can wait on
    CHECK(e.done());
  });
}

TEST_CASE("a CUDA worker wraps device memory and refuses host memory", "[parallel][cuda]") {
  FakeCuda fake;
  Team team({fake_gpu()});
  team.run([&](Worker& w) {
    auto device = w.alloc<float>(16);  // fake device memory, standing for cudaMalloc'd memory
    auto wrapped = w.wrap(device.data(), DType::f32, 16);
    w.fill(wrapped, 3.0);
    CHECK(device.to_vector() == std::vector<float>(16, 3.0f));
    std::vector<float> host(16);
    CHECK_THROWS_MATCHES(w.wrap(std::span<float>(host)), Error, invalid("host memory"));

    // DLPack: kDLCUDA on this GPU is imported in place; CPU memory is refused.
    DLManagedTensor* t = device.to_dlpack();
    CHECK(t->dl_tensor.device.device_type == kDLCUDA);
    CHECK(t->dl_tensor.device.device_id == 0);
    auto back = w.from_dlpack(t);
    CHECK(back.data() == device.data());
    DLManagedTensor* cpu = device.to_dlpack();
    cpu->dl_tensor.device = {kDLCPU, 0};
    CHECK_THROWS_MATCHES(w.from_dlpack(cpu), Error, invalid("move it to that GPU first"));
    cpu->dl_tensor.device = {kDLCUDA, 3};
    CHECK_THROWS_MATCHES(w.from_dlpack(cpu), Error, invalid("CUDA device 3"));
    cpu->deleter(cpu);
  });
}

TEST_CASE("the trainer on a CUDA plugin without its kernel table says what is missing",
          "[parallel][cuda]") {
  FakeCuda fake;
  Team team({fake_gpu()});
  std::vector<float> x(8 * 4, 0.5f);
  std::vector<std::int32_t> y(8, 1);
  auto data = std::make_shared<InMemoryDataset>("tiny", std::move(x), std::move(y), 4, 2);
  TrainerOptions o;
  o.layers = {4, 2};
  o.global_batch = 8;
  try {
    DataParallelTrainer t(team, o, data);
    FAIL("a trainer without kernels");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::unavailable);
    CHECK_THAT(e.what(), Catch::Contains("has no trainer kernels"));
  }
}

TEST_CASE("a CUDA plugin without the mixed-precision kernels says so, and to rebuild it",
          "[parallel][cuda]") {
  FakeCuda fake;  // its backend table ends before cast, unscale_check and optimizer_step
  Team team({fake_gpu()});
  team.run([&](Worker& w) {
    auto a = w.alloc<float>(4);
    auto b = w.alloc<bfloat16>(4);
    try {
      w.cast(a, b);
      FAIL("a cast without the kernel");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::unavailable);
      CHECK_THAT(e.what(), Catch::Contains("cast") && Catch::Contains("rebuild it"));
    }
  });
}
