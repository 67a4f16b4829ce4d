// Worker compute through the public API, on host and sim workers: gemm in f32, f16 and bf16
// against a double-precision reference, fill, scale and axpy in every type they take, slices
// and wrapped memory in every call, and the clear invalid_argument each bad call gets.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

#include "nubo/error.hpp"
#include "nubo/parallel.hpp"
#include "rank_checks.hpp"
#include "workers.hpp"

using namespace nubo;
using nubo_test::host_workers;
using nubo_test::RankChecks;
using nubo_test::sim_workers;

namespace {

auto invalid(const std::string& says) {
  return Catch::Predicate<Error>(
      [says](const Error& e) {
        return e.code() == Errc::invalid_argument &&
               std::string(e.what()).find(says) != std::string::npos;
      },
      "invalid_argument saying \"" + says + "\"");
}

// Deterministic values in [-1, 1).
std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> out(n);
  std::uint32_t s = seed * 2654435761u + 1u;
  for (auto& v : out) {
    s = s * 1664525u + 1013904223u;
    v = -1.0f + 2.0f * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return out;
}

// The tolerance of one element of a GEMM of this type: one rounding of the result to the type
// (2^-24, 2^-11, 2^-8 relative), plus f32 accumulation over k products ((k + 2) * 2^-24 of the
// sum of their magnitudes).
double unit_roundoff(DType t) {
  return t == DType::f32 ? 0x1p-24 : t == DType::f16 ? 0x1p-11 : 0x1p-8;
}

// Empty when the worker's GEMM matches the reference, else what differs (it runs on a worker
// thread: no Catch2 there).
template <class T>
std::string check_worker_gemm(Worker& w, DType type, bool ta, bool tb, float beta) {
  const std::size_t m = 23, n = 17, k = 41;
  const Gemm g{.trans_a = ta ? Transpose::yes : Transpose::no,
               .trans_b = tb ? Transpose::yes : Transpose::no,
               .m = m,
               .n = n,
               .k = k,
               .alpha = 0.75f,
               .beta = beta};
  auto round = [](const std::vector<float>& v) {
    std::vector<T> out;
    for (float f : v) out.push_back(T(f));
    return out;
  };
  const auto ha = round(values(m * k, 1)), hb = round(values(k * n, 2)),
             hc = round(values(m * n, 3));
  auto a = w.alloc<T>(ha.size()), b = w.alloc<T>(hb.size()), c = w.alloc<T>(hc.size());
  a.write(ha);
  b.write(hb);
  c.write(hc);
  w.gemm(g, a, b, c);
  const auto got = c.to_vector();
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0, mag = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const double x = static_cast<float>(ta ? ha[p * m + i] : ha[i * k + p]);
        const double y = static_cast<float>(tb ? hb[j * k + p] : hb[p * n + j]);
        acc += x * y;
        mag += std::abs(x * y);
      }
      const double prior = static_cast<float>(hc[i * n + j]);
      const double expect = 0.75 * acc + beta * prior;
      const double tol = unit_roundoff(type) * std::abs(expect) +
                         0x1p-24 * (k + 2) * (0.75 * mag + std::abs(beta * prior));
      const double diff = std::abs(static_cast<float>(got[i * n + j]) - expect);
      if (!(diff <= tol))
        return std::string(dtype_name(type)) + " ta=" + std::to_string(ta) +
               " tb=" + std::to_string(tb) + " beta=" + std::to_string(beta) + ": C[" +
               std::to_string(i) + "][" + std::to_string(j) + "] is off by " +
               std::to_string(diff) + ", more than " + std::to_string(tol);
    }
  return {};
}

}  // namespace

TEST_CASE("Worker::gemm in f32, f16 and bf16 matches a double reference on host and sim",
          "[parallel][compute]") {
  for (const auto& devices : {host_workers(2), sim_workers(2)}) {
    Team team(devices);
    RankChecks checks;
    team.run([&](Worker& w) {
      for (const bool ta : {false, true})
        for (const bool tb : {false, true})
          for (const float beta : {0.0f, 0.5f}) {
            for (const std::string& off :
                 {check_worker_gemm<float>(w, DType::f32, ta, tb, beta),
                  check_worker_gemm<half>(w, DType::f16, ta, tb, beta),
                  check_worker_gemm<bfloat16>(w, DType::bf16, ta, tb, beta)})
              checks.expect(off.empty(), w.rank(), off.c_str(), __LINE__);
          }
    });
    checks.report();
  }
}

TEST_CASE("gemm on slices multiplies the blocks they view", "[parallel][compute]") {
  Team team(sim_workers(1));
  team.run([](Worker& w) {
    // One allocation holding A (2x3), B (3x2) and C (2x2) back to back.
    auto all = w.alloc<float>(6 + 6 + 4);
    all.write(std::vector<float>{1, 2, 3, 4, 5, 6, 1, 0, 0, 1, 1, 1, 9, 9, 9, 9});
    auto c = all.slice(12, 4);
    w.gemm({.m = 2, .n = 2, .k = 3}, all.slice(0, 6), all.slice(6, 6), c);
    CHECK(all.to_vector() == std::vector<float>{1, 2, 3, 4, 5, 6, 1, 0, 0, 1, 1, 1, 4, 5, 10, 11});
  });
}

TEST_CASE("gemm refuses buffers that do not fit the call", "[parallel][compute]") {
  Team team(host_workers(2));
  std::mutex mutex;
  std::vector<DeviceBuffer> of_rank0;
  team.run([&](Worker& w) {
    if (w.rank() == 0) {
      std::lock_guard<std::mutex> lock(mutex);
      of_rank0.push_back(w.alloc<float>(16));
    }
  });
  team.run([&](Worker& w) {
    if (w.rank() != 1) return;
    auto a = w.alloc<float>(6), b = w.alloc<float>(6), c = w.alloc<float>(4);
    const Gemm g{.m = 2, .n = 2, .k = 3};
    CHECK_THROWS_MATCHES(w.gemm({.m = 3, .n = 2, .k = 3}, a, b, c), Error,
                         invalid("A holds 6 elements but the shape"));
    CHECK_THROWS_MATCHES(w.gemm({.m = 2, .n = 2, .k = 3, .ldc = 3}, a, b, c), Error,
                         invalid("C holds 4 elements"));
    CHECK_THROWS_MATCHES(w.gemm({.m = 2, .n = 2, .k = 3, .lda = 2}, a, b, c), Error,
                         invalid("lda=2"));
    auto i32 = w.alloc<std::int32_t>(6);
    CHECK_THROWS_MATCHES(w.gemm(g, i32, b, c), Error, invalid("must be one type"));
    auto ia = w.alloc<std::int32_t>(6), ib = w.alloc<std::int32_t>(6),
         ic = w.alloc<std::int32_t>(4);
    CHECK_THROWS_MATCHES(w.gemm(g, ia, ib, ic), Error, invalid("not a floating-point type"));
    auto all = w.alloc<float>(12);
    auto overlapping = all.slice(4, 4);
    CHECK_THROWS_MATCHES(w.gemm(g, all.slice(0, 6), b, overlapping), Error,
                         invalid("C overlaps A or B"));
    CHECK_THROWS_MATCHES(w.gemm(g, of_rank0[0], b, c), Error, invalid("not on rank 1's device"));
    DeviceBuffer moved = std::move(a);
    CHECK_THROWS_MATCHES(w.gemm(g, a, b, c), Error, invalid("empty (moved-from)"));
    // Nothing was written by the refused calls.
    c.write(std::vector<float>(4, 7.0f));
    CHECK_THROWS_AS(w.gemm({.m = 3, .n = 2, .k = 3}, moved, b, c), Error);
    CHECK(c.to_vector() == std::vector<float>(4, 7.0f));
  });
}

TEST_CASE("fill converts the value to each type, and refuses values that do not fit",
          "[parallel][compute]") {
  Team team(sim_workers(1));
  team.run([](Worker& w) {
    auto f = w.alloc<float>(5);
    auto i = w.alloc<std::int32_t>(3);
    auto l = w.alloc<std::int64_t>(2);
    auto h = w.alloc<half>(4);
    auto b = w.alloc<bfloat16>(4);
    w.fill(f, 0.1);
    CHECK(f.to_vector() == std::vector<float>(5, 0.1f));
    w.fill(i, -2147483648.0);
    CHECK(i.to_vector() == std::vector<std::int32_t>(3, std::numeric_limits<std::int32_t>::min()));
    w.fill(l, 9007199254740992.0);  // 2^53
    CHECK(l.to_vector() == std::vector<std::int64_t>(2, 9007199254740992));
    w.fill(h, 1.0 / 3);
    CHECK(h.to_vector() == std::vector<half>(4, half(1.0f / 3)));
    w.fill(b, -1e30);
    CHECK(b.to_vector() == std::vector<bfloat16>(4, bfloat16(-1e30f)));
    w.fill(f, std::numeric_limits<double>::infinity());
    CHECK(std::isinf(f.to_vector()[0]));
    auto rows = f.slice(1, 2);
    w.fill(rows, 5.0);
    CHECK(f.to_vector()[1] == 5.0f);
    CHECK(std::isinf(f.to_vector()[3]));

    CHECK_THROWS_MATCHES(w.fill(i, 1.5), Error, invalid("not a whole number in the range of i32"));
    CHECK_THROWS_MATCHES(w.fill(i, 2147483648.0), Error, invalid("range of i32"));
    CHECK_THROWS_MATCHES(w.fill(l, std::nan("")), Error, invalid("range of i64"));
    CHECK_THROWS_MATCHES(w.fill(f, 1e39), Error, invalid("outside the range of f32"));
    CHECK(i.to_vector() == std::vector<std::int32_t>(3, std::numeric_limits<std::int32_t>::min()));
  });
}

TEST_CASE("scale and axpy work in place in the floating types and check their operands",
          "[parallel][compute]") {
  Team team(host_workers(1));
  team.run([](Worker& w) {
    auto x = w.alloc<bfloat16>(3), y = w.alloc<bfloat16>(3);
    x.write(std::vector<bfloat16>{bfloat16(1.0f), bfloat16(2.0f), bfloat16(3.0f)});
    w.fill(y, 1.0);
    w.scale(x, 0.5f);
    w.axpy(2.0f, x, y);
    CHECK(y.to_vector() == std::vector<bfloat16>{bfloat16(2.0f), bfloat16(3.0f), bfloat16(4.0f)});
    w.axpy(1.0f, y, y);  // x and y the same buffer
    CHECK(y.to_vector() == std::vector<bfloat16>{bfloat16(4.0f), bfloat16(6.0f), bfloat16(8.0f)});

    auto i = w.alloc<std::int32_t>(3);
    CHECK_THROWS_MATCHES(w.scale(i, 2.0f), Error, invalid("x holds i32"));
    auto f = w.alloc<float>(3), longer = w.alloc<float>(4);
    CHECK_THROWS_MATCHES(w.axpy(1.0f, x, f), Error, invalid("x holds bf16 but y f32"));
    CHECK_THROWS_MATCHES(w.axpy(1.0f, longer, f), Error, invalid("x holds 4 elements but y 3"));
    auto shifted = longer.slice(1, 3);
    CHECK_THROWS_MATCHES(w.axpy(1.0f, longer.slice(0, 3), shifted), Error,
                         invalid("overlap without being the same buffer"));
  });
}

TEST_CASE("wrapped memory is used in place by every call, and never freed by nubo",
          "[parallel][compute]") {
  for (const auto& devices : {host_workers(2), sim_workers(2)}) {
    Team team(devices);
    std::vector<std::vector<float>> arrays(2, std::vector<float>(1000));
    RankChecks checks;
    team.run([&](Worker& w) {
      auto& mine = arrays[static_cast<std::size_t>(w.rank())];
      for (std::size_t i = 0; i < mine.size(); ++i)
        mine[i] = static_cast<float>(i) * static_cast<float>(w.rank() + 1);
      const std::size_t before = w.bytes_in_use();
      {
        auto buf = w.wrap(std::span<float>(mine));
        RANK_EXPECT(checks, w, buf.data() == mine.data());
        w.all_reduce(buf, ReduceOp::sum);
        w.scale(buf, 0.5f);
        RANK_EXPECT(checks, w, w.bytes_in_use() == before);  // no buffer of nubo's own
      }
    });
    checks.report();
    // Each array itself holds the result, and is still the application's.
    for (const auto& mine : arrays)
      for (std::size_t i = 0; i < mine.size(); i += 111)
        REQUIRE(mine[i] == static_cast<float>(i) * 1.5f);
  }
}

TEST_CASE("a sim worker takes slices of wrapped memory, which its pointer checks accept",
          "[parallel][compute]") {
  Team team(sim_workers(1));
  team.run([](Worker& w) {
    std::vector<float> host(8, 1.0f);
    auto wrapped = w.wrap(std::span<float>(host));
    auto sliced = wrapped.slice(2, 4);
    w.scale(sliced, 3.0f);
    CHECK(host == std::vector<float>{1, 1, 3, 3, 3, 3, 1, 1});
    wrapped = Buffer<float>();  // the slice still holds the adoption
    w.scale(sliced, 2.0f);
    CHECK(host[5] == 6.0f);
  });
}

TEST_CASE("wrap refuses null pointers, overflowing sizes and unknown types",
          "[parallel][compute]") {
  Team team(host_workers(1));
  team.run([](Worker& w) {
    CHECK_THROWS_MATCHES(w.wrap(nullptr, DType::f32, 4), Error, invalid("null pointer"));
    float x = 0;
    CHECK_THROWS_MATCHES(w.wrap(&x, DType::i64, std::numeric_limits<std::size_t>::max() / 4), Error,
                         invalid("overflow the address space"));
    CHECK_THROWS_MATCHES(w.wrap(&x, static_cast<DType>(9), 1), Error, invalid("unknown dtype"));
    auto empty = w.wrap(nullptr, DType::f32, 0);  // no elements, no memory: still a buffer
    CHECK(empty.size() == 0);
    CHECK(empty.data() != nullptr);
    w.all_reduce(empty);
    CHECK_THROWS_AS(Buffer<float>(w.wrap(&x, DType::i32, 1)), Error);  // not a Buffer<float>
  });
}

TEST_CASE("a slice keeps nubo's memory alive, and refuses ranges outside the buffer",
          "[parallel][compute]") {
  Team team(sim_workers(2));
  std::vector<float> seen(2);
  RankChecks checks;
  team.run([&](Worker& w) {
    const std::size_t before = w.bytes_in_use();
    DeviceBuffer tail;
    {
      auto whole = w.alloc<float>(64);
      w.fill(whole, static_cast<double>(w.rank() + 1));
      tail = whole.slice(60, 4);
    }
    RANK_EXPECT(checks, w, w.bytes_in_use() > before);  // the slice holds the allocation
    w.all_reduce(tail, ReduceOp::sum);
    std::vector<float> out(4);
    tail.read(out.data(), 16);
    seen[static_cast<std::size_t>(w.rank())] = out[3];
    tail = DeviceBuffer();
    RANK_EXPECT(checks, w, w.bytes_in_use() == before);
  });
  checks.report();
  CHECK(seen == std::vector<float>{3.0f, 3.0f});
  team.run([&](Worker& w) {
    if (w.rank() != 0) return;  // one thread: Catch2 may be used
    auto whole = w.alloc<float>(64);
    CHECK_THROWS_MATCHES(whole.slice(60, 5), Error, invalid("outside the buffer of 64"));
    CHECK_THROWS_MATCHES(whole.slice(65, 0), Error, invalid("outside the buffer"));
  });
}

TEST_CASE("host and sim workers have no streams: native handles are null, CUDA events refused",
          "[parallel][compute]") {
  Team team(host_workers(1));
  team.run([](Worker& w) {
    const NativeHandles h = w.native();
    CHECK(h.cuda_stream == nullptr);
    CHECK(h.cublas_handle == nullptr);
    CHECK(h.nccl_comm == nullptr);
    CHECK(h.device_ordinal == -1);
    w.use_stream(nullptr);  // the default stream: nothing changes
    w.use_own_stream();
    int stream = 0;
    CHECK_THROWS_MATCHES(w.use_stream(&stream), Error, invalid("without streams"));
    CHECK_THROWS_MATCHES(w.wait_native_event(&stream), Error, invalid("without streams"));
    Event e = w.record_event();
    CHECK(e.done());
    e.synchronize();
    CHECK(e.native() == nullptr);
    w.wait_event(e);
    Event moved = std::move(e);
    CHECK_THROWS_MATCHES(w.wait_event(e), Error, invalid("empty (moved from)"));
    w.synchronize();
  });
}
