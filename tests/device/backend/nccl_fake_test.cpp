// The NCCL communicator's never-hang logic, driven by a fake plugin: collectives that finish,
// peers that fail (an asynchronous NCCL error), peers that never come (the timeout), setups
// that stall, and the errors that follow an abort.
#include <catch2/catch.hpp>

#include <thread>

#include <map>

#include "backend_helpers.hpp"
#include "fake_plugin.hpp"
#include "nubo/error.hpp"
#include "parallel/communicators/nccl_communicator.hpp"

using namespace nubo;
using namespace nubo::testing;
using namespace std::chrono_literals;

namespace {

using parallel::Op;
using parallel::OpKind;

// One collective as the Worker hands it over.
Op op(OpKind kind, void* buf, std::size_t count, DType type, ReduceOp r = ReduceOp::sum,
      int root = 0, const void* in = nullptr) {
  return Op{kind, type, r, root, count, in ? in : buf, buf};
}

auto has_code(Errc code) {
  return Catch::Predicate<Error>([code](const Error& e) { return e.code() == code; },
                                 "error code " + std::string(errc_name(code)));
}

std::unique_ptr<detail::Communicator> one_rank(detail::CudaBackend& b,
                                               std::chrono::milliseconds timeout = 50ms) {
  std::vector<detail::DeviceBackend*> bs = {&b};
  auto comms = detail::make_nccl_communicators(bs, timeout);
  return std::move(comms.front());
}

class MapStore final : public detail::RendezvousBytes {
 public:
  void set(const std::string& key, const std::string& bytes) override { values[key] = bytes; }
  std::string get(const std::string& key, std::chrono::milliseconds) override {
    const auto it = values.find(key);
    if (it == values.end()) throw Error(Errc::timeout, "no value for " + key);
    return it->second;
  }
  std::map<std::string, std::string> values;
};

}  // namespace

TEST_CASE("an NCCL collective that completes returns and leaves the communicator usable",
          "[backend][nccl]") {
  fake() = {};
  auto b = fake_backend();
  {
    auto comm = one_rank(*b);
    float buf[8] = {};  // in at the start, out from buf + 4: room for 8 bytes of each
    comm->run(op(OpKind::all_reduce, buf, 4, DType::f32, ReduceOp::avg));
    comm->run(op(OpKind::broadcast, buf, 4, DType::bf16));
    comm->run(op(OpKind::all_gather, buf + 4, 2, DType::i32, ReduceOp::sum, 0, buf));
    comm->run(op(OpKind::reduce_scatter, buf + 4, 1, DType::i64, ReduceOp::max, 0, buf));
    comm->run(Op{});
    REQUIRE(fake().calls.size() == 5);
    CHECK(fake().calls[0].kind == NUBO_CUDA_ALL_REDUCE);
    CHECK(fake().calls[0].op == static_cast<int>(ReduceOp::avg));
    CHECK(fake().calls[0].send == fake().calls[0].recv);  // in place
    CHECK(fake().calls[1].kind == NUBO_CUDA_BROADCAST);
    CHECK(fake().calls[1].dtype == static_cast<int>(DType::bf16));
    CHECK(fake().calls[3].count == 1);
    CHECK(fake().calls[4].dtype == static_cast<int>(DType::i32));  // the barrier
    CHECK(fake().aborts == 0);
  }
  CHECK(fake().destroys == 1);  // a clean shutdown destroys rather than aborts
}

TEST_CASE("a peer's failure aborts the communicator and reaches the caller", "[backend][nccl]") {
  fake() = {};
  fake().events_complete = false;
  fake().async_error = 6;  // ncclRemoteError
  auto b = fake_backend();
  auto comm = one_rank(*b, 10s);  // the error, not the timeout, ends the wait
  float buf[4] = {};
  auto h = comm->submit(op(OpKind::all_reduce, buf, 4, DType::f32));
  CHECK(h->done());  // wait() would not block: it throws at once
  try {
    h->wait();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::unavailable);
    CHECK_THAT(e.what(), Catch::Contains("ncclRemoteError") && Catch::Contains("rank 0 of 1") &&
                             Catch::Contains("aborted"));
  }
  CHECK(fake().aborts == 1);
  // Everything after the abort fails at once, saying why.
  CHECK_THROWS_MATCHES(comm->run(op(OpKind::all_reduce, buf, 4, DType::f32)), Error,
                       has_code(Errc::unavailable));
  CHECK_THROWS_WITH(comm->run(Op{}), Catch::Contains("aborted after an earlier failure"));
  CHECK(comm->native() == nullptr);  // no communicator left to hand out
  comm.reset();
  CHECK(fake().aborts == 1);  // not aborted twice, not destroyed after the abort
  CHECK(fake().destroys == 0);
}

TEST_CASE("a collective that never completes times out instead of hanging", "[backend][nccl]") {
  fake() = {};
  fake().events_complete = false;  // a peer that never called it
  auto b = fake_backend();
  auto comm = one_rank(*b, 30ms);
  float buf[4] = {};
  try {
    comm->run(op(OpKind::all_reduce, buf, 4, DType::f32));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::timeout);
    CHECK_THAT(e.what(), Catch::Contains("all_reduce(sum) of 4 x f32") &&
                             Catch::Contains("did not complete within 30 ms") &&
                             Catch::Contains("cannot tell which rank"));
  }
  CHECK(fake().aborts == 1);
}

TEST_CASE("another thread's abort request stops a stuck collective, naming why",
          "[backend][nccl]") {
  fake() = {};
  fake().events_complete = false;  // stuck until told to stop
  auto b = fake_backend();
  auto comm = one_rank(*b, 60s);
  float buf[4] = {};
  std::thread watcher([&] {
    std::this_thread::sleep_for(50ms);
    comm->request_abort("GPU 0 failed: XID 79");
  });
  try {
    comm->run(op(OpKind::all_reduce, buf, 4, DType::f32));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::cancelled);
    CHECK_THAT(e.what(), Catch::Contains("cancelled because GPU 0 failed: XID 79"));
  }
  watcher.join();
  CHECK(fake().aborts == 1);
  // Every later collective fails too, saying why.
  CHECK_THROWS_WITH(comm->run(op(OpKind::all_reduce, buf, 4, DType::f32)),
                    Catch::Contains("XID 79"));
}

TEST_CASE("shutdown with a collective still stuck aborts instead of hanging", "[backend][nccl]") {
  fake() = {};
  auto b = fake_backend();
  auto comm = one_rank(*b, 20ms);
  float buf[1] = {};
  fake().events_complete = false;
  auto h = comm->submit(op(OpKind::all_reduce, buf, 1, DType::f32));
  CHECK_FALSE(h->done());
  h.reset();
  comm.reset();
  CHECK(fake().aborts == 1);
  CHECK(fake().destroys == 0);
}

TEST_CASE("an enqueue that fails maps the NCCL error", "[backend][nccl]") {
  fake() = {};
  fake().collective_rc = NUBO_CUDA_CALL_FAILED;
  fake().collective_result = 5;  // ncclInvalidUsage
  auto b = fake_backend();
  auto comm = one_rank(*b);
  float buf[2] = {};
  try {
    comm->run(op(OpKind::all_gather, buf + 1, 1, DType::f32, ReduceOp::sum, 0, buf));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("ncclInvalidUsage") &&
                             Catch::Contains("same collectives in the same order"));
  }
}

TEST_CASE("zero-element collectives and bad arguments", "[backend][nccl]") {
  fake() = {};
  auto b = fake_backend();
  auto comm = one_rank(*b);
  float buf[1] = {};
  comm->run(op(OpKind::all_reduce, buf, 0, DType::f32));
  CHECK(fake().calls.empty());  // nothing to send: complete without NCCL
  CHECK_THROWS_MATCHES(comm->run(op(OpKind::broadcast, buf, 1, DType::f32, ReduceOp::sum, 1)),
                       Error, has_code(Errc::invalid_argument));
  CHECK_THROWS_MATCHES(comm->run(op(OpKind::all_reduce, buf, 1, static_cast<DType>(42))), Error,
                       has_code(Errc::invalid_argument));
}

TEST_CASE("NCCL needs CUDA backends and a plugin built with NCCL", "[backend][nccl]") {
  fake() = {};
  auto host = detail::make_backend(host_device());
  std::vector<detail::DeviceBackend*> bs = {host.get()};
  CHECK_THROWS_WITH(detail::make_nccl_communicators(bs, 1s),
                    Catch::Contains("NCCL needs CUDA devices"));
  auto no_nccl = fake_backend(0, false);
  bs = {no_nccl.get()};
  CHECK_THROWS_MATCHES(detail::make_nccl_communicators(bs, 1s), Error, has_code(Errc::unsupported));
}

TEST_CASE("across processes, rank 0 publishes the NCCL id and the others read it",
          "[backend][nccl]") {
  fake() = {};
  MapStore store;
  auto b0 = fake_backend(0);
  auto b1 = fake_backend(1);
  auto r0 = detail::make_nccl_communicator(*b0, 0, 2, store, 1s, "job/nccl");
  REQUIRE(store.values.count("job/nccl") == 1);
  CHECK(store.values["job/nccl"].size() == NUBO_CUDA_NCCL_ID_SIZE);
  auto r1 = detail::make_nccl_communicator(*b1, 1, 2, store, 1s, "job/nccl");
  CHECK(r1 != nullptr);
}

TEST_CASE("a rank whose rank 0 never publishes fails, naming rank 0", "[backend][nccl]") {
  fake() = {};
  MapStore store;
  auto b = fake_backend(1);
  try {
    detail::make_nccl_communicator(*b, 1, 2, store, 10ms);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::timeout);
    CHECK_THAT(e.what(), Catch::Contains("rank 0 did not publish"));
  }
  store.values["nubo/nccl-id"] = "short";
  CHECK_THROWS_MATCHES(detail::make_nccl_communicator(*b, 1, 2, store, 10ms), Error,
                       has_code(Errc::corrupt));
  CHECK_THROWS_MATCHES(detail::make_nccl_communicator(*b, 2, 2, store, 10ms), Error,
                       has_code(Errc::invalid_argument));
}

TEST_CASE("a setup whose peers never join times out and aborts", "[backend][nccl]") {
  fake() = {};
  fake().init_rc = NUBO_CUDA_CALL_IN_PROGRESS;
  fake().async_error = 7;  // ncclInProgress, for ever
  MapStore store;
  auto b = fake_backend(0);
  try {
    detail::make_nccl_communicator(*b, 0, 4, store, 20ms);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::timeout);
    CHECK_THAT(e.what(), Catch::Contains("waiting for all 4 ranks to join"));
  }
  CHECK(fake().aborts == 1);
}

TEST_CASE("a setup that fails outright reports NCCL's reason", "[backend][nccl]") {
  fake() = {};
  fake().init_rc = NUBO_CUDA_CALL_FAILED;
  MapStore store;
  auto b = fake_backend(0);
  CHECK_THROWS_MATCHES(detail::make_nccl_communicator(*b, 0, 2, store, 1s), Error,
                       has_code(Errc::unavailable));
}
