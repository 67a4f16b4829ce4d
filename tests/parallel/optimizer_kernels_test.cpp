// Worker's mixed-precision kernels and the fused optimiser update, on host and sim workers,
// against a double-precision reference per element.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "nubo/error.hpp"
#include "nubo/parallel.hpp"
#include "workers.hpp"

using namespace nubo;

namespace {

std::vector<float> randoms(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

Buffer<float> upload(Worker& w, const std::vector<float>& v) {
  auto b = w.alloc<float>(v.size());
  b.write(std::span<const float>(v));
  return b;
}

// The rules in double: what each f32 element should be near.
struct Ref {
  double w, m, v;
};

Ref reference(const OptimizerUpdate& u, Ref s, double g) {
  g *= u.grad_scale;
  if (u.kind == OptimizerKind::sgd) {
    s.m = u.momentum * s.m + (g + u.weight_decay * s.w);
    s.w -= u.lr * s.m;
    return s;
  }
  if (u.kind == OptimizerKind::adamw) s.w -= u.lr * u.weight_decay * s.w;
  if (u.kind == OptimizerKind::adam) g += u.weight_decay * s.w;
  s.m = u.beta1 * s.m + (1 - u.beta1) * g;
  s.v = u.beta2 * s.v + (1 - u.beta2) * g * g;
  const double mh = s.m / (1 - std::pow(static_cast<double>(u.beta1), u.step));
  const double vh = s.v / (1 - std::pow(static_cast<double>(u.beta2), u.step));
  s.w -= u.lr * mh / (std::sqrt(vh) + u.eps);
  return s;
}

}  // namespace

TEST_CASE("the fused update of SGD, Adam and AdamW matches a double reference per element") {
  const auto kind = GENERATE(OptimizerKind::sgd, OptimizerKind::adam, OptimizerKind::adamw);
  const auto devices = GENERATE(as<int>{}, 0, 1);  // host, sim
  Team team(devices == 0 ? nubo_test::host_workers(1) : nubo_test::sim_workers(1));
  team.run([&](Worker& w) {
    const std::size_t n = 5000;  // over one host block of 4096, to cross its boundary
    auto w0 = randoms(n, 1), g0 = randoms(n, 2, 0.1f);
    auto master = upload(w, w0);
    auto m = w.alloc<float>(n), v = w.alloc<float>(n);
    w.fill(m, 0.0);
    w.fill(v, 0.0);
    std::vector<Ref> ref(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = {w0[i], 0, 0};
    OptimizerUpdate u;
    u.kind = kind;
    u.lr = 0.01f;
    u.weight_decay = 0.01f;
    u.grad_scale = 0.5f;
    for (int t = 1; t <= 5; ++t) {
      const auto g = randoms(n, 10 + static_cast<std::uint32_t>(t), 0.1f);
      auto grads = upload(w, g);
      u.step = t;
      w.optimizer_step(u, master, grads, m, v);
      for (std::size_t i = 0; i < n; ++i) ref[i] = reference(u, ref[i], g[i]);
    }
    const auto got = master.to_vector();
    // f32 arithmetic over 5 steps against double: a few ulps of lr-sized updates.
    for (std::size_t i = 0; i < n; ++i) REQUIRE(got[i] == Approx(ref[i].w).margin(1e-6));
  });
}

TEST_CASE("the fused update takes 16-bit gradients and writes the 16-bit copy") {
  // Tolerances: the master follows the double reference (fed the gradients as the 16-bit type
  // holds them) within f32 rounding, 1e-6 over 5 steps of lr 1e-2; the copy is the master
  // rounded once to its type, within half its unit in the last place: at most 2^-8 of the value
  // in bf16 (8 significant bits), 2^-11 in f16 (11), and half f16's smallest subnormal (2^-25).
  const auto type = GENERATE(DType::bf16, DType::f16);
  const auto kind = GENERATE(OptimizerKind::sgd, OptimizerKind::adam, OptimizerKind::adamw);
  Team team(nubo_test::host_workers(1));
  team.run([&](Worker& w) {
    const std::size_t n = 300;
    auto w0 = randoms(n, 3);
    auto master = upload(w, w0);
    auto m = w.alloc<float>(n), v = w.alloc<float>(n);
    w.fill(m, 0.0);
    w.fill(v, 0.0);
    DeviceBuffer g16 = w.alloc(type, n), p16 = w.alloc(type, n);
    auto back = w.alloc<float>(n);
    std::vector<Ref> ref(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = {w0[i], 0, 0};
    OptimizerUpdate u;
    u.kind = kind;
    u.lr = 0.01f;
    u.weight_decay = 0.01f;
    for (int t = 1; t <= 5; ++t) {
      auto g32 = upload(w, randoms(n, 40 + static_cast<std::uint32_t>(t), 0.1f));
      w.cast(g32, g16);
      w.cast(g16, back);  // what the 16-bit gradients hold
      const auto held = back.to_vector();
      u.step = t;
      w.optimizer_step(u, master, g16, m, v, &p16);
      for (std::size_t i = 0; i < n; ++i) ref[i] = reference(u, ref[i], held[i]);
    }
    w.cast(p16, back);
    const auto got = master.to_vector(), copy = back.to_vector();
    const double half_ulp = type == DType::bf16 ? 1.0 / 256 : 1.0 / 2048;
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(got[i] == Approx(ref[i].w).margin(1e-6));
      REQUIRE(std::abs(copy[i] - got[i]) <= std::abs(got[i]) * half_ulp + std::ldexp(1.0, -25));
    }
  });
}

TEST_CASE("cast converts between f32, f16 and bf16 with round to nearest even") {
  Team team(nubo_test::sim_workers(1));
  team.run([&](Worker& w) {
    const std::vector<float> x = {1.0f,  1.0f + 1.0f / 256, 1.0f + 3.0f / 256, -2.5f, 65504.0f,
                                  1e-8f, 70000.0f};
    auto f = upload(w, x);
    auto b = w.alloc<bfloat16>(x.size());
    auto h = w.alloc<half>(x.size());
    w.cast(f, b);
    w.cast(b, h);  // 16 to 16 goes through f32
    const auto bv = b.to_vector();
    for (std::size_t i = 0; i < x.size(); ++i)
      REQUIRE(static_cast<float>(bv[i]) == static_cast<float>(bfloat16(x[i])));
    const auto hv = h.to_vector();
    REQUIRE(static_cast<float>(hv[0]) == 1.0f);
    REQUIRE(std::isinf(static_cast<float>(hv[6])));  // 70000 is beyond f16's range
  });
}

TEST_CASE("unscale_check unscales, flags a non-finite gradient and sums the squares") {
  Team team(nubo_test::host_workers(1));
  team.run([&](Worker& w) {
    auto g = upload(w, {2.0f, 4.0f, -6.0f});
    auto stats = w.alloc<float>(2);
    w.fill(stats, 0.0);
    w.unscale_check(g, 0.5f, stats);
    REQUIRE(g.to_vector() == std::vector<float>{1.0f, 2.0f, -3.0f});
    REQUIRE(stats.to_vector() == std::vector<float>{0.0f, 14.0f});
    auto bad = upload(w, {1.0f, std::numeric_limits<float>::infinity()});
    w.unscale_check(bad, 1.0f, stats);
    REQUIRE(stats.to_vector()[0] == 1.0f);
    auto nan = w.alloc<half>(1);
    w.fill(nan, 0.0);
    auto s2 = w.alloc<float>(2);
    w.fill(s2, 0.0);
    w.unscale_check(nan, 1.0f, s2);
    REQUIRE(s2.to_vector()[0] == 0.0f);
  });
}

TEST_CASE("the mixed-precision kernels refuse bad input, naming it") {
  Team team(nubo_test::host_workers(1));
  team.run([&](Worker& w) {
    auto f = w.alloc<float>(4), f3 = w.alloc<float>(3);
    auto i = w.alloc<std::int32_t>(4);
    w.fill(f, 1.0);
    REQUIRE_THROWS_WITH(w.cast(f, f3), Catch::Contains("in holds 4 elements but out 3"));
    REQUIRE_THROWS_WITH(w.cast(i, f), Catch::Contains("i32"));
    REQUIRE_THROWS_WITH(w.unscale_check(f, 1, f3), Catch::Contains("stats must hold 2 f32"));
    OptimizerUpdate u;
    u.step = 0;
    DeviceBuffer none;
    REQUIRE_THROWS_WITH(w.optimizer_step(u, f, f, f3, f), Catch::Contains("step must be >= 1"));
    u.step = 1;
    REQUIRE_THROWS_WITH(w.optimizer_step(u, f, f3, f, f),
                        Catch::Contains("grads holds 3 elements but master 4"));
    REQUIRE_THROWS_WITH(w.optimizer_step(u, f, f, f, none), Catch::Contains("v"));
    u.kind = OptimizerKind::sgd;
    auto m = w.alloc<float>(4);
    w.fill(m, 0.0);
    w.optimizer_step(u, f, f, m, none);  // SGD needs no second moment
    u.kind = static_cast<OptimizerKind>(7);
    REQUIRE_THROWS_WITH(w.optimizer_step(u, f, f, m, none),
                        Catch::Contains("unknown optimizer kind 7"));
  });
}
