// Memory accounting, out-of-memory and separation of sim devices; copies; events; and sim
// devices driven from several host threads at once.
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include "backend_helpers.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::testing;

TEST_CASE("allocations are counted, aligned and distinct, also for zero bytes",
          "[backend][memory]") {
  for (auto& b : cpu_backends()) {
    INFO(b->describe());
    CHECK(b->bytes_in_use() == 0);
    void* p = b->allocate(1000);
    void* q = b->allocate(0);
    void* r = b->allocate(0);
    CHECK(p != nullptr);
    CHECK(q != nullptr);
    CHECK(q != r);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 256 == 0);
    CHECK(b->bytes_in_use() == 1000);
    b->free(p);
    b->free(q);
    b->free(r);
    b->free(nullptr);
    CHECK(b->bytes_in_use() == 0);
  }
}

TEST_CASE("freeing a pointer twice or one from elsewhere is an error", "[backend][memory]") {
  for (auto& b : cpu_backends()) {
    void* p = b->allocate(16);
    b->free(p);
    CHECK_THROWS_MATCHES(b->free(p), Error, Catch::Predicate<Error>([](const Error& e) {
                           return e.code() == Errc::invalid_argument &&
                                  std::string(e.what()).find("did not allocate") !=
                                      std::string::npos;
                         }));
    int local = 0;
    CHECK_THROWS_AS(b->free(&local), Error);
  }
}

TEST_CASE("a sim device runs out of memory at its model's size, naming itself",
          "[backend][memory]") {
  auto b = detail::make_backend(sim_device(3, 1 << 20, "T4"));
  CHECK(b->memory_limit() == (1u << 20));
  void* p = b->allocate(600 * 1024);
  try {
    b->allocate(600 * 1024);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::out_of_memory);
    CHECK_THAT(e.what(), Catch::Contains("sim 3 (T4)") && Catch::Contains("out of memory") &&
                             Catch::Contains("1.0 MiB"));
  }
  CHECK(b->bytes_in_use() == 600 * 1024);  // the failed request took nothing
  b->free(p);
  void* q = b->allocate(1 << 20);  // exactly the limit fits
  b->free(q);
}

TEST_CASE("sim devices from discovery have their model's memory as the limit",
          "[backend][memory]") {
  DiscoverOptions o;
  o.sim_devices = "2xT4";
  o.probe_cuda = false;
  const DeviceReport report = discover(o);
  REQUIRE(report.devices.size() == 2);
  auto b0 = detail::make_backend(report.devices[0]);
  auto b1 = detail::make_backend(report.devices[1]);
  CHECK(b0->memory_limit() == report.devices[0].memory_total);
  CHECK(b0->memory_limit() >= (std::size_t{15} << 30));  // a T4 holds 15 GiB usable
  CHECK_THAT(b1->describe(), Catch::Contains("sim 1"));
  // Accounting is per device.
  void* p = b0->allocate(4096);
  CHECK(b0->bytes_in_use() == 4096);
  CHECK(b1->bytes_in_use() == 0);
  // A buffer of device 0 is not device 1's memory.
  std::vector<char> host(4096, 'x');
  try {
    b1->copy_to_device(p, host.data(), host.size());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("sim 1") && Catch::Contains("not inside memory"));
  }
  CHECK_THROWS_AS(b1->free(p), Error);
  b0->free(p);
}

TEST_CASE("a sim device rejects overruns, freed buffers and host arrays", "[backend][memory]") {
  auto b = detail::make_backend(sim_device(0, 1 << 20));
  std::vector<float> host(64, 1.0f);
  auto* p = static_cast<float*>(b->allocate(32 * sizeof(float)));
  CHECK_THROWS_AS(b->copy_to_device(p, host.data(), 64 * sizeof(float)), Error);  // overrun
  CHECK_THROWS_AS(b->copy_to_device(p + 16, host.data(), 17 * sizeof(float)), Error);
  b->copy_to_device(p + 16, host.data(), 16 * sizeof(float));  // the last 16 fit exactly
  CHECK_THROWS_AS(b->fill(host.data(), 64, 4, 0), Error);      // a host array
  CHECK_THROWS_AS(b->scale(DType::f32, p, 33, 1.0f), Error);   // an overrun
  b->free(p);
  CHECK_THROWS_AS(b->fill(p, 1, 4, 0), Error);  // freed
}

TEST_CASE("a sim device accepts memory it adopted until it forgets it", "[backend][memory]") {
  auto b = detail::make_backend(sim_device(0, 1 << 20));
  std::vector<float> host(64, 1.0f);
  CHECK_THROWS_AS(b->scale(DType::f32, host.data(), 64, 2.0f), Error);
  b->adopt(host.data(), 64 * sizeof(float));
  b->adopt(host.data() + 8, 8 * sizeof(float));  // a second view inside the first
  b->scale(DType::f32, host.data(), 64, 2.0f);
  CHECK(host[63] == 2.0f);
  CHECK(b->bytes_in_use() == 0);  // adopted memory is the application's, not nubo's
  b->forget(host.data(), 64 * sizeof(float));
  CHECK_THROWS_AS(b->scale(DType::f32, host.data(), 64, 2.0f), Error);
  b->scale(DType::f32, host.data() + 8, 8, 2.0f);  // the inner view is still adopted
  CHECK(host[8] == 4.0f);
  b->forget(host.data() + 8, 8 * sizeof(float));
  CHECK_THROWS_AS(b->scale(DType::f32, host.data() + 8, 8, 2.0f), Error);
  CHECK_THROWS_AS(b->adopt(nullptr, 4), Error);
}

TEST_CASE("copies round-trip, and device-to-device copies may overlap", "[backend][memory]") {
  for (auto& b : cpu_backends()) {
    INFO(b->describe());
    std::vector<std::int32_t> src(100);
    for (int i = 0; i < 100; ++i) src[static_cast<std::size_t>(i)] = i;
    auto* d = static_cast<std::int32_t*>(b->allocate(100 * sizeof(std::int32_t)));
    auto* e = static_cast<std::int32_t*>(b->allocate(100 * sizeof(std::int32_t)));
    b->copy_to_device(d, src.data(), 100 * sizeof(std::int32_t));
    b->copy_on_device(e, d, 100 * sizeof(std::int32_t));
    b->copy_on_device(e + 10, e, 50 * sizeof(std::int32_t));  // overlapping, like memmove
    std::vector<std::int32_t> out(100, -1);
    b->copy_to_host(out.data(), e, 100 * sizeof(std::int32_t));
    b->synchronize();
    for (int i = 0; i < 100; ++i) {
      const int expected = i >= 10 && i < 60 ? i - 10 : i;
      REQUIRE(out[static_cast<std::size_t>(i)] == expected);
    }
    b->copy_to_host(out.data(), e, 0);  // zero bytes: nothing, no error
    b->free(d);
    b->free(e);
  }
}

TEST_CASE("events record, complete and can be waited on across devices", "[backend][events]") {
  auto a = detail::make_backend(sim_device(0, 1 << 20));
  auto b = detail::make_backend(sim_device(1, 1 << 20));
  auto ev = a->create_event();
  CHECK(ev->done());  // never recorded
  DeviceBuffer<float> x(*a, 8, 0.0f);
  a->fill(x.get(), 8, 4, 0x3f800000u);  // 1.0f
  a->record(*ev);
  ev->synchronize();
  CHECK(ev->done());
  b->wait(*ev);  // device 1's later work is ordered after device 0's fill
  CHECK(x.read() == std::vector<float>(8, 1.0f));
}

TEST_CASE("sim devices work independently on their own threads", "[backend][threads]") {
  // Like a team: one thread per device, each allocating and computing at the same time.
  constexpr int kDevices = 4;
  std::vector<std::unique_ptr<detail::DeviceBackend>> devices;
  for (int i = 0; i < kDevices; ++i)
    devices.push_back(detail::make_backend(sim_device(i, 1 << 24)));
  std::vector<float> results(kDevices, 0.0f);
  std::vector<std::thread> threads;
  for (int i = 0; i < kDevices; ++i)
    threads.emplace_back([&, i] {
      detail::DeviceBackend& b = *devices[static_cast<std::size_t>(i)];
      DeviceBuffer<float> a(b, 32 * 32, 1.0f), m(b, 32 * 32, static_cast<float>(i)),
          c(b, 32 * 32, 0.0f);
      detail::Gemm g;
      g.m = g.n = g.k = 32;
      for (int rep = 0; rep < 20; ++rep) b.gemm(g, DType::f32, a.get(), m.get(), c.get());
      results[static_cast<std::size_t>(i)] = c.read()[0];
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kDevices; ++i)
    CHECK(results[static_cast<std::size_t>(i)] == static_cast<float>(32 * i));
  for (auto& d : devices) CHECK(d->bytes_in_use() == 0);
}
