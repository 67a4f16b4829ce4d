// The CUDA backend with the real plugin. Without a GPU (this machine): opening a cuda device
// fails cleanly with Errc::unavailable and discovery's reason, never a crash. With a GPU (the
// [gpu] tests, run by benchmarks/gpu_check.sh): the elementwise kernels against the host
// backend, GEMM in f32, f16 and bf16 against a naive loop, copies, events, out-of-memory, and
// NCCL on the GPUs of the process.
#include <catch2/catch.hpp>

#include "skip.hpp"

#include <cmath>
#include <cstring>
#include <thread>

#include "backend_helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/half.hpp"
#include "parallel/communicators/nccl_communicator.hpp"

using namespace nubo;
using namespace nubo::testing;
using namespace std::chrono_literals;

namespace {

Device cuda_device(int ordinal) {
  Device d;
  d.backend = Backend::cuda;
  d.index = d.ordinal = ordinal;
  return d;
}

auto has_code(Errc code) {
  return Catch::Predicate<Error>([code](const Error& e) { return e.code() == code; },
                                 "error code " + std::string(errc_name(code)));
}

}  // namespace

TEST_CASE("a plugin that is missing or turned off gives unavailable", "[backend][cuda]") {
  {
    ScopedEnv plugin("NUBO_CUDA_PLUGIN", "/nonexistent/libnubo_cuda.so");
    CHECK_THROWS_MATCHES(detail::make_backend(cuda_device(0)), Error, has_code(Errc::unavailable));
    CHECK_THROWS_WITH(detail::make_backend(cuda_device(0)), Catch::Contains("does not exist"));
  }
  {
    ScopedEnv off("NUBO_CUDA", "0");
    CHECK_THROWS_WITH(detail::make_backend(cuda_device(0)), Catch::Contains("NUBO_CUDA=0"));
  }
#ifdef NUBO_TEST_NOT_A_PLUGIN
  {
    // A real shared library without the backend entry point (an old or foreign plugin).
    ScopedEnv plugin("NUBO_CUDA_PLUGIN", NUBO_TEST_NOT_A_PLUGIN);
    CHECK_THROWS_WITH(detail::make_backend(cuda_device(0)),
                      Catch::Contains("does not export nubo_cuda_backend_v2"));
  }
#endif
}

#ifdef NUBO_TEST_CUDA_PLUGIN

namespace {

// The CUDA devices discovery sees with the built plugin; empty on a machine without a GPU.
std::vector<Device> cuda_devices() {
  DiscoverOptions o;
  o.sim_devices = "";
  o.cuda_plugin_path = NUBO_TEST_CUDA_PLUGIN;
  std::vector<Device> out;
  for (const Device& d : discover(o).devices)
    if (d.backend == Backend::cuda) out.push_back(d);
  return out;
}

}  // namespace

TEST_CASE("without a usable GPU, opening a cuda device reports why instead of crashing",
          "[backend][cuda]") {
  ScopedEnv plugin("NUBO_CUDA_PLUGIN", NUBO_TEST_CUDA_PLUGIN);
  DiscoverOptions o;
  o.sim_devices = "";
  const DeviceReport report = discover(o);
  const std::size_t gpus = cuda_devices().size();
  // Ordinal 0 where there is no GPU; one past the last where there are GPUs.
  const int ordinal = static_cast<int>(gpus);
  try {
    detail::make_backend(cuda_device(ordinal));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::unavailable);
    CHECK_THAT(e.what(),
               Catch::Contains("cuda " + std::to_string(ordinal) + ": cannot open the device"));
    // The reason discovery gives (no-driver or no-nvidia-gpu on a machine like this one) is in
    // the message.
    if (const Diagnosis* d = report.find_diagnosis("no-driver")) {
      CHECK_THAT(e.what(), Catch::Contains("[no-driver]") && Catch::Contains("libcuda.so.1"));
      (void)d;
    }
    if (report.find_diagnosis("no-nvidia-gpu") != nullptr)
      CHECK_THAT(e.what(), Catch::Contains("[no-nvidia-gpu]"));
  }
}

// --- With a GPU ------------------------------------------------------------------------------

namespace {

std::uint16_t to_bf16(float f) {  // exact for the values used (few mantissa bits)
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// IEEE half for normal numbers and zero (all the test uses), round to nearest even.
std::uint16_t to_f16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  if ((u & 0x7fffffffu) == 0) return static_cast<std::uint16_t>(sign);
  const int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  std::uint32_t mant = u & 0x7fffffu;
  std::uint32_t h = sign | (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(h);
}
float from_f16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  std::uint32_t u = sign;
  if (exp != 0) u |= ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Values in multiples of 1/8 between -2 and 2: exact in f16 and bf16, so only the product's
// rounding differs from the reference.
std::vector<float> eighths(std::size_t n, std::uint32_t seed) {
  auto v = random_floats(n, seed, -16.0f, 16.0f);
  for (auto& x : v) x = std::round(x) / 8.0f;
  return v;
}

void gpu_gemm_check(detail::DeviceBackend& gpu, DType type, std::size_t m, std::size_t n,
                    std::size_t k, bool ta, bool tb) {
  Gemm g;
  g.m = m, g.n = n, g.k = k;
  g.trans_a = ta ? Transpose::yes : Transpose::no;
  g.trans_b = tb ? Transpose::yes : Transpose::no;
  const bool f32_data = type == DType::f32 || type == DType::tf32;
  g.alpha = 0.5f, g.beta = f32_data ? 0.25f : 0.0f;
  g.lda = ta ? m : k, g.ldb = tb ? k : n, g.ldc = n;
  const auto a = eighths(m * k, 1), b = eighths(k * n, 2);
  auto c = eighths(m * n, 3);
  std::vector<float> got(m * n);
  if (f32_data) {
    DeviceBuffer<float> da(gpu, a), db(gpu, b), dc(gpu, c);
    gpu.gemm(g, type, da.get(), db.get(), dc.get());
    got = dc.read();
  } else {
    auto conv = [&](const std::vector<float>& v) {
      std::vector<std::uint16_t> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i)
        out[i] = type == DType::f16 ? to_f16(v[i]) : to_bf16(v[i]);
      return out;
    };
    DeviceBuffer<std::uint16_t> da(gpu, conv(a)), db(gpu, conv(b)), dc(gpu, conv(c));
    gpu.gemm(g, type, da.get(), db.get(), dc.get());
    const auto raw = dc.read();
    for (std::size_t i = 0; i < raw.size(); ++i)
      got[i] = type == DType::f16 ? from_f16(raw[i]) : from_bf16(raw[i]);
  }
  naive_gemm(g, a, b, c);
  // Output rounding: 2^-11 relative for f16, 2^-8 for bf16; fp32 accumulation either way. The
  // inputs are eighths, exact in TF32's 10-bit mantissa, so tf32 is as close as f32 but for
  // the order of its sums.
  const double rel = type == DType::f32    ? 1e-5
                     : type == DType::tf32 ? 1e-4
                     : type == DType::f16  ? 1e-3
                                           : 8e-3;
  for (std::size_t i = 0; i < c.size(); ++i)
    REQUIRE(got[i] == Approx(c[i]).epsilon(rel).margin(rel * 4));
}

}  // namespace

TEST_CASE("GPU: GEMM in f32, tf32, f16 and bf16 matches a naive loop", "[backend][gpu]") {
  const auto gpus = cuda_devices();
  if (gpus.empty()) {
    NUBO_SKIP("no CUDA device here");
  }
  auto gpu = detail::make_backend(gpus[0]);
  for (const DType t : {DType::f32, DType::tf32, DType::f16, DType::bf16})
    for (const bool ta : {false, true})
      for (const bool tb : {false, true}) {
        INFO(dtype_name(t) << " ta=" << ta << " tb=" << tb);
        gpu_gemm_check(*gpu, t, 37, 53, 64, ta, tb);
        gpu_gemm_check(*gpu, t, 128, 96, 200, ta, tb);
      }
}

TEST_CASE("GPU: the elementwise kernels match the host backend in every type", "[backend][gpu]") {
  const auto gpus = cuda_devices();
  if (gpus.empty()) {
    NUBO_SKIP("no CUDA device here");
  }
  auto gpu = detail::make_backend(gpus[0]);
  auto cpu = detail::make_backend(host_device());
  const std::size_t n = 11111;
  const auto x = random_floats(n, 21, -3.0f, 3.0f), y = random_floats(n, 22);
  // The same sequence on a backend, in a 16-bit type's bits or f32's; returns every output.
  auto run = [&](detail::DeviceBackend& b, DType t) {
    const std::size_t es = dtype_size(t);
    std::vector<unsigned char> hx(n * es), hy(n * es);
    const auto put = [&](std::vector<unsigned char>& h, std::size_t i, float v) {
      const half h16(v);
      const bfloat16 b16(v);
      const void* src = t == DType::f32   ? static_cast<const void*>(&v)
                        : t == DType::f16 ? static_cast<const void*>(&h16)
                                          : static_cast<const void*>(&b16);
      std::memcpy(&h[i * es], src, es);
    };
    for (std::size_t i = 0; i < n; ++i) {
      put(hx, i, x[i]);
      put(hy, i, y[i]);
    }
    DeviceBuffer<unsigned char> dx(b, hx), dy(b, hy);
    std::vector<std::vector<unsigned char>> r;
    b.axpy(t, n, -0.5f, dx.get(), dy.get());
    r.push_back(dy.read());
    b.scale(t, dy.get(), n, 3.0f);
    r.push_back(dy.read());
    b.fill(dx.get(), n, es, 0x1234u);
    r.push_back(dx.read());
    return r;
  };
  for (const DType t : {DType::f32, DType::f16, DType::bf16}) {
    INFO(dtype_name(t));
    // The same arithmetic and one rounding on both: bit for bit.
    CHECK(run(*gpu, t) == run(*cpu, t));
  }
}

TEST_CASE("GPU: copies, events and out-of-memory", "[backend][gpu]") {
  const auto gpus = cuda_devices();
  if (gpus.empty()) {
    NUBO_SKIP("no CUDA device here");
  }
  auto gpu = detail::make_backend(gpus[0]);
  CHECK_FALSE(gpu->host_accessible());
  std::vector<std::int32_t> src(1 << 20);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::int32_t>(i);
  DeviceBuffer<std::int32_t> a(*gpu, src), b(*gpu, src.size(), 0);
  gpu->copy_on_device(b.get(), a.get(), src.size() * 4);
  auto ev = gpu->create_event();
  gpu->record(*ev);
  ev->synchronize();
  CHECK(ev->done());
  gpu->wait(*ev);
  CHECK(b.read() == src);
  try {
    gpu->allocate(std::size_t{1} << 50);  // a petabyte
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::out_of_memory);
    CHECK_THAT(e.what(), Catch::Contains("cuda " + std::to_string(gpus[0].ordinal)));
  }
  CHECK(gpu->bytes_in_use() == 2 * src.size() * 4);
}

TEST_CASE("GPU: pinned host memory and a copy from a peer GPU", "[backend][gpu]") {
  const auto gpus = cuda_devices();
  if (gpus.empty()) {
    NUBO_SKIP("no CUDA device here");
  }
  // With one GPU the peer is the same device: cudaMemcpyPeer still copies.
  auto gpu = detail::make_backend(gpus[0]);
  auto peer = detail::make_backend(gpus.size() > 1 ? gpus[1] : gpus[0]);
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  void* host = gpu->allocate_host(kBytes);
  std::memset(host, 0x5a, kBytes);
  void* src = peer->allocate(kBytes);
  void* dst = gpu->allocate(kBytes);
  peer->copy_to_device(src, host, kBytes);
  peer->synchronize();
  std::memset(host, 0, kBytes);
  gpu->copy_from_peer(dst, *peer, src, kBytes);
  gpu->copy_to_host(host, dst, kBytes);
  gpu->synchronize();
  const auto* bytes = static_cast<const unsigned char*>(host);
  CHECK(bytes[0] == 0x5a);
  CHECK(bytes[kBytes - 1] == 0x5a);
  gpu->free_host(host);
  peer->free(src);
  gpu->free(dst);
}

TEST_CASE("GPU: NCCL collectives on the GPUs of this process", "[backend][gpu][nccl]") {
  const auto gpus = cuda_devices();
  if (gpus.empty()) {
    NUBO_SKIP("no CUDA device here");
  }
  std::vector<std::unique_ptr<detail::DeviceBackend>> owned;
  std::vector<detail::DeviceBackend*> backends;
  for (const Device& d : gpus) {
    owned.push_back(detail::make_backend(d));
    backends.push_back(owned.back().get());
  }
  auto comms = detail::make_nccl_communicators(backends, 60s);
  const int n = static_cast<int>(comms.size());
  // One thread per GPU, as a team runs them; with one GPU this runs inline.
  std::vector<std::thread> threads;
  std::vector<std::string> failures(comms.size());
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        auto& b = *backends[static_cast<std::size_t>(r)];
        auto& c = *comms[static_cast<std::size_t>(r)];
        std::vector<float> v(1000, static_cast<float>(r + 1));
        DeviceBuffer<float> buf(b, v);
        using parallel::Op;
        using parallel::OpKind;
        c.run(Op{OpKind::all_reduce, DType::f32, ReduceOp::sum, 0, v.size(), buf.get(), buf.get()});
        const float sum = static_cast<float>(n * (n + 1) / 2);
        for (float x : buf.read())
          if (x != sum) throw std::runtime_error("all_reduce sum wrong");
        DeviceBuffer<std::int64_t> ib(b, 10, r);
        c.run(Op{OpKind::all_reduce, DType::i64, ReduceOp::max, 0, 10, ib.get(), ib.get()});
        for (auto x : ib.read())
          if (x != n - 1) throw std::runtime_error("all_reduce max wrong");
        DeviceBuffer<float> gathered(b, static_cast<std::size_t>(n) * 4, 0.0f);
        DeviceBuffer<float> mine(b, 4, static_cast<float>(r));
        c.run(Op{OpKind::all_gather, DType::f32, ReduceOp::sum, 0, 4, mine.get(), gathered.get()});
        const auto g = gathered.read();
        for (int q = 0; q < n; ++q)
          if (g[static_cast<std::size_t>(q) * 4] != static_cast<float>(q))
            throw std::runtime_error("all_gather wrong");
        // all_to_all: block q of rank r's input (value 100 r + q) goes to rank q, at block r.
        std::vector<float> blocks(static_cast<std::size_t>(n) * 3);
        for (std::size_t i = 0; i < blocks.size(); ++i)
          blocks[i] = static_cast<float>(100 * r + static_cast<int>(i / 3));
        DeviceBuffer<float> sent(b, blocks);
        DeviceBuffer<float> received(b, blocks.size(), -1.0f);
        c.run(Op{OpKind::all_to_all, DType::f32, ReduceOp::sum, 0, 3, sent.get(), received.get()});
        const auto got = received.read();
        for (int q = 0; q < n; ++q)
          if (got[static_cast<std::size_t>(q) * 3 + 2] != static_cast<float>(100 * q + r))
            throw std::runtime_error("all_to_all wrong");
        c.run(Op{});
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& f : failures) CHECK(f.empty());
}

#endif  // NUBO_TEST_CUDA_PLUGIN
