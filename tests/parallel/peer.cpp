// One process of the cross-process tests. It joins the job in its environment (NUBO_RANK,
// NUBO_WORLD_SIZE, NUBO_RENDEZVOUS, as nubo-run sets them) and plays a scenario:
//
//   peer collectives [WORKERS [GROUPS [large]]]
//                                   every collective, type and op vs the reference; WORKERS
//                                   host workers in this process (default 1); GROUPS the
//                                   processes per host, e.g. 2,2 (the reference then combines
//                                   host by host; "-": one host); large: also sizes of several
//                                   shared-memory chunks
//   peer loop READY_DIR [DIE_RANK DIE_AT]
//                                   all-reduces 1M floats forever; after the first, creates
//                                   READY_DIR/<rank>; rank DIE_RANK kills itself (SIGKILL) at
//                                   iteration DIE_AT
//   peer mismatch                   rank 1 all-reduces one element more than the others
//   peer join                       joins and passes one barrier
//   peer own-loop                   Team::join(), then collectives from the main thread and
//                                   from a thread of its own, and a GEMM, without run()
//   peer abort-async                two host workers per process; rank 1 starts an
//                                   all-reduce of 32 MiB asynchronously and throws at once
//   peer sharded STAGE PRECISION    the sharded optimizer's test run (sharded_run.hpp) at
//                                   that stage and precision; prints "sharded: HEX", a hash
//                                   of the parameters it ends with
//
// Exit status: 0 on success; 3 after a nubo::Error, printed as "peer rank R: <code>: <what>";
// 1 when results are wrong.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "check_collectives.hpp"
#include "nubo/error.hpp"
#include "nubo/parallel.hpp"
#include "sharded_run.hpp"

using namespace nubo;

namespace {

int rank_from_env() {
  const char* r = std::getenv("NUBO_RANK");
  return r ? std::atoi(r) : 0;
}

std::vector<Device> host_devices(int n) {
  DiscoverOptions o;
  o.probe_cuda = false;
  o.sim_devices = "";
  return std::vector<Device>(static_cast<std::size_t>(n), discover(o).host_device());
}

int collectives(int workers, const std::string& groups, bool large) {
  Team team = Team::from_env(host_devices(workers));
  std::vector<std::string> problems;
  std::mutex mutex;
  test::CheckOptions options;
  // One worker per process: every reduction runs in rank order (host by host across hosts),
  // bit for bit the reference's. Several: each process's workers are summed first, so
  // floating-point results may differ from the reference by rounding.
  options.exact = workers == 1;
  options.large = large;
  if (groups != "-") {
    for (std::size_t at = 0; at < groups.size();) {
      const std::size_t comma = groups.find(',', at);
      options.groups.push_back(std::atoi(groups.substr(at, comma - at).c_str()));
      at = comma == std::string::npos ? groups.size() : comma + 1;
    }
  }
  team.run([&](Worker& w) {
    auto found = test::check_all_collectives(w, options);
    std::lock_guard<std::mutex> lock(mutex);
    problems.insert(problems.end(), found.begin(), found.end());
  });
  for (const auto& p : problems) std::fprintf(stderr, "wrong: %s\n", p.c_str());
  const JobSpec job = JobSpec::from_env();
  std::printf("rank %d of %d (%s): %d workers of %d checked\n", job.rank, job.world_size,
              job.launcher.c_str(), team.local_size(), team.size());
  return problems.empty() ? 0 : 1;
}

int loop(const std::string& ready_dir, int die_rank, long die_at) {
  Team team = Team::from_env(host_devices(1));
  team.run([&](Worker& w) {
    auto buf = w.alloc<float>(1 << 20);
    buf.write(std::vector<float>(1 << 20, 1.0f));
    for (long it = 0;; ++it) {
      if (w.rank() == die_rank && it == die_at) ::raise(SIGKILL);
      w.all_reduce(buf, ReduceOp::avg);
      if (it == 0) std::ofstream(ready_dir + "/" + std::to_string(w.rank())) << "ready\n";
    }
  });
  return 0;
}

int mismatch() {
  Team team = Team::from_env(host_devices(1));
  team.run([&](Worker& w) {
    auto buf = w.alloc<float>(w.rank() == 1 ? 101 : 100);
    w.all_reduce(buf);
  });
  return 0;
}

int abort_async() {
  Team team = Team::from_env(host_devices(2));
  team.run([&](Worker& w) {
    auto buf = w.alloc<float>(8 << 20);
    if (w.rank() == 1) {
      auto pending = w.all_reduce_async(buf);
      throw std::runtime_error("rank 1 gave up");
    }
    for (int i = 0; i < 4; ++i) w.all_reduce(buf);
  });
  return 0;
}

int join() {
  Team team = Team::from_env(host_devices(1));
  team.run([&](Worker& w) { w.barrier(); });
  std::printf("rank %d joined a team of %d\n", rank_from_env(), team.size());
  return 0;
}

// A program with its own loop: the worker is called from the main thread, then from another
// thread, as an application's data loader or autograd thread would.
int own_loop() {
  Team team = Team::join();
  Worker& w = team.worker();
  const int n = w.size();
  auto grad = w.alloc<float>(1000);
  for (int step = 1; step <= 3; ++step) {
    grad.write(std::vector<float>(1000, static_cast<float>(w.rank() + step)));
    w.all_reduce(grad, ReduceOp::sum);
    const float want = static_cast<float>(n * step + n * (n - 1) / 2);
    const float got = grad.to_vector()[999];
    if (got != want) {
      std::fprintf(stderr, "step %d: %g, not %g\n", step, static_cast<double>(got),
                   static_cast<double>(want));
      return 1;
    }
  }
  std::exception_ptr failure;
  std::thread other([&] {
    try {
      auto pending = w.all_reduce_async(grad, ReduceOp::max);
      pending.wait();
      w.barrier();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  other.join();
  if (failure) std::rethrow_exception(failure);
  auto a = w.alloc<float>(4), b = w.alloc<float>(4), c = w.alloc<float>(4);
  a.write(std::vector<float>{1, 2, 3, 4});
  b.write(std::vector<float>{1, 0, 0, 1});
  w.gemm({.m = 2, .n = 2, .k = 2}, a, b, c);
  if (c.to_vector() != std::vector<float>{1, 2, 3, 4}) return 1;
  std::printf("rank %d of %d: own loop done\n", w.rank(), n);
  return 0;
}

}  // namespace

// ThreadSanitizer builds: Gloo's classic algorithms send and receive their one-byte
// notifications through one shared dummy byte, so Gloo's network thread recv()s into it while
// the calling thread writev()s from it. The byte's value is never read; Gloo itself is not
// instrumented, and only its calls into libc are seen. Nothing of nubo's is suppressed.
extern "C" __attribute__((visibility("default"))) const char* __tsan_default_suppressions() {
  return "race:gloo::transport::tcp::Pair::read\nrace:gloo::transport::tcp::Pair::write\n";
}

int sharded(int stage, const std::string& precision) {
  Team team = Team::from_env(host_devices(1));
  nubo_test::ShardedRun run;
  run.slices = {3000, 7, 500};
  run.options.optimizer = OptimizerKind::adamw;
  run.options.lr = 0.01f;
  run.options.stage = stage;
  run.options.precision = parse_dtype(precision);
  std::vector<float> params;
  team.run([&](Worker& w) { params = nubo_test::run_sharded(w, run); });
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the bytes
  for (unsigned char c :
       std::string(reinterpret_cast<const char*>(params.data()), params.size() * sizeof(float)))
    hash = (hash ^ c) * 1099511628211ull;
  std::printf("sharded: %016llx\n", static_cast<unsigned long long>(hash));
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "collectives")
      return collectives(argc > 2 ? std::atoi(argv[2]) : 1, argc > 3 ? argv[3] : "-",
                         argc > 4 && std::string(argv[4]) == "large");
    if (mode == "loop" && argc > 2) {
      return loop(argv[2], argc > 3 ? std::atoi(argv[3]) : -1, argc > 4 ? std::atol(argv[4]) : 0);
    }
    if (mode == "mismatch") return mismatch();
    if (mode == "join") return join();
    if (mode == "own-loop") return own_loop();
    if (mode == "abort-async") return abort_async();
    if (mode == "sharded" && argc > 3) return sharded(std::atoi(argv[2]), argv[3]);
    std::fprintf(stderr, "usage: peer collectives|loop DIR|mismatch|join|own-loop|abort-async\n");
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "peer rank %d: %s: %s\n", rank_from_env(),
                 std::string(errc_name(e.code())).c_str(), e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer rank %d: exception: %s\n", rank_from_env(), e.what());
    return 4;
  }
}
