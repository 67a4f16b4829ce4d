// All-reduce bus bandwidth, as nccl-tests defines it: algbw = bytes / time, busbw = algbw x
// 2(n - 1)/n (the bytes each rank must move in a bandwidth-optimal all-reduce), for 1 KiB to
// 256 MiB of f32.
//
//   bench_allreduce local --out FILE     one process, teams of 2, 4 and 8 host workers (shared
//                                        memory), against memcpy bandwidth on this machine
//   nubo-run --nproc 2 -- bench_allreduce gloo --out FILE
//                                        two processes: nubo's Gloo path (Worker::all_reduce)
//                                        against raw Gloo AllreduceRing, interleaved in the
//                                        same run; rank 0 writes the table
//   nubo-run --nproc 2 -- bench_allreduce processes --out FILE
//                                        two processes on one host: shared memory against
//                                        nubo over Gloo, raw Gloo and memcpy; appends to FILE
//   nubo-run --nproc 2 -- bench_allreduce all_to_all --out FILE
//                                        all_to_all: two workers in one process, two processes
//                                        over shared memory and over Gloo, raw gloo::alltoall
//                                        and memcpy, interleaved; appends to FILE
//   bench_allreduce one --workers N --bytes B --iterations I
//                                        one timed round on N host workers; prints the seconds
//                                        per all_reduce (bench_python_allreduce.py compares the
//                                        Python binding's with it)
//
// Each point is the median of several timed rounds of a few iterations, sized so that a whole
// run stays short on a small machine. MAX_BYTES (environment) lowers the top size.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nubo/nubo.hpp"

#if NUBO_HAVE_GLOO
#include <gloo/allreduce_ring.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::size_t> sizes() {
  std::size_t max = std::size_t{256} << 20;
  if (const char* m = std::getenv("MAX_BYTES")) max = std::strtoull(m, nullptr, 10);
  std::vector<std::size_t> s;
  for (std::size_t b = 1024; b <= max; b *= 4) s.push_back(b);
  return s;
}

// Iterations per timed round: many for small messages, few for large, about 20 MiB a round.
int iterations(std::size_t bytes) {
  const std::size_t it = (std::size_t{20} << 20) / bytes;
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(it, 200)));
}
constexpr int kRounds = 5;
constexpr int kGlooRounds = 10;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string human(std::size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

double busbw(std::size_t bytes, double seconds, int n) {
  return static_cast<double>(bytes) / seconds / 1e9 * 2.0 * (n - 1) / n;
}

// Single-thread memcpy bandwidth (GB/s) for a buffer of `bytes`: the yardstick of a
// shared-memory all-reduce, which is memory traffic.
double memcpy_gbs(std::size_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  const int it = iterations(bytes);
  std::vector<double> rounds;
  for (int r = 0; r < kRounds; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < it; ++i) {
      std::memcpy(b.data(), a.data(), bytes);
      a[static_cast<std::size_t>(i) % bytes] = b[0];  // keeps the copies from being elided
    }
    rounds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / it);
  }
  return static_cast<double>(bytes) / median(rounds) / 1e9;
}

// Seconds per all_reduce in a team: the median over rounds of rank 0's time for `it` calls,
// each round starting from a barrier.
double time_team(nubo::Team& team, std::size_t bytes, int rounds_wanted = kRounds,
                 int it_wanted = 0) {
  std::vector<double> rounds;
  const int it = it_wanted > 0 ? it_wanted : iterations(bytes);
  team.run([&](nubo::Worker& w) {
    auto buf = w.alloc<float>(bytes / sizeof(float));
    buf.write(std::vector<float>(bytes / sizeof(float), 1.0f));
    w.all_reduce(buf);  // warm-up: first touch of the pages
    for (int r = 0; r < rounds_wanted; ++r) {
      w.barrier();
      const auto t0 = Clock::now();
      for (int i = 0; i < it; ++i) w.all_reduce(buf);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count() / it;
      if (w.rank() == 0) rounds.push_back(s);
    }
  });
  return median(rounds);
}

// The host device, alone: one worker per process.
std::vector<nubo::Device> host_only() {
  nubo::DiscoverOptions o;
  o.probe_cuda = false;
  o.sim_devices = "";
  return {nubo::discover(o).host_device()};
}

int local(const std::string& out_path, const std::string& command) {
  const nubo::Device host = host_only().front();
  const std::vector<int> teams{2, 4, 8};
  std::ostringstream t;
  t << "# All-reduce in one process: shared memory between host workers\n\n"
    << "Command: `" << command << "`\n\n"
    << "Machine: " << std::thread::hardware_concurrency() << " cores, " << host.name
    << ". f32 sum, in place. busbw = algbw x 2(n-1)/n (nccl-tests); memcpy = one thread "
       "copying a buffer of that size. Ratio = busbw / memcpy.\n\n"
    << "| size | memcpy GB/s |";
  for (int n : teams) t << " busbw " << n << " workers GB/s | ratio |";
  t << "\n|---:|---:|";
  for (std::size_t i = 0; i < teams.size(); ++i) t << "---:|---:|";
  t << "\n";
  std::vector<nubo::Team> made;
  for (int n : teams)
    made.emplace_back(std::vector<nubo::Device>(static_cast<std::size_t>(n), host));
  for (std::size_t bytes : sizes()) {
    const double copy = memcpy_gbs(bytes);
    char line[512];
    std::snprintf(line, sizeof line, "| %s | %.2f |", human(bytes).c_str(), copy);
    t << line;
    for (std::size_t k = 0; k < teams.size(); ++k) {
      const double bw = busbw(bytes, time_team(made[k], bytes), teams[k]);
      std::snprintf(line, sizeof line, " %.2f | %.2f |", bw, bw / copy);
      t << line;
    }
    t << "\n";
    std::fprintf(stderr, "%s done\n", human(bytes).c_str());
  }
  std::ofstream(out_path) << t.str();
  std::fputs(t.str().c_str(), stdout);
  return 0;
}

#if NUBO_HAVE_GLOO
// Raw Gloo, as a user of Gloo would write it: its own context on the same rendezvous folder,
// an AllreduceRing built once per size and run repeatedly.
struct RawGloo {
  std::shared_ptr<gloo::rendezvous::Context> ctx;
  RawGloo(int rank, int size, const std::string& dir) {
    std::filesystem::create_directories(dir);  // Gloo's FileStore wants it to exist
    gloo::rendezvous::FileStore store(dir);
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(std::chrono::seconds(60));
    ctx->connectFullMesh(store, dev);
  }
};

// This process's place in a job of several under nubo-run with a folder rendezvous; nullopt,
// having said how to run it, otherwise.
std::optional<nubo::JobSpec> process_job() {
  nubo::JobSpec job = nubo::JobSpec::from_env();
  if (job.world_size < 2 || job.rendezvous.rfind("file://", 0) != 0) {
    std::fprintf(stderr, "run me under nubo-run --nproc 2 (file rendezvous)\n");
    return std::nullopt;
  }
  return job;
}

// The two teams the processes compare on one host: the default one (shared memory between
// processes of one host) and one made with NUBO_SHM_DISABLE=1 (nubo over Gloo/TCP on loopback).
struct ProcessTeams {
  nubo::Team shm, tcp;
};
ProcessTeams process_teams() {
  const std::vector<nubo::Device> one = host_only();
  nubo::Team shm = nubo::Team::from_env(one);
  ::setenv("NUBO_SHM_DISABLE", "1", 1);
  nubo::Team tcp = nubo::Team::from_env(one);
  ::unsetenv("NUBO_SHM_DISABLE");
  return {std::move(shm), std::move(tcp)};
}

// One timed round: `it` calls of body(i) after a barrier of `sync`'s team, seconds per call.
template <class Body>
void time_round(std::vector<double>& rounds, nubo::Worker& sync, int it, Body body) {
  sync.barrier();
  const auto t0 = Clock::now();
  for (int i = 0; i < it; ++i) body(i);
  rounds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / it);
}

// Rank 0 appends the table to the results file and prints it.
void append_table(const std::string& out_path, const nubo::JobSpec& job, const std::string& t) {
  if (job.rank != 0) return;
  std::ofstream(out_path, std::ios::app) << "\n" << t;
  std::fputs(t.c_str(), stdout);
}

int gloo_mode(const std::string& out_path, const std::string& command) {
  const auto found = process_job();
  if (!found) return 2;
  const nubo::JobSpec& job = *found;
  nubo::Team team = nubo::Team::from_env(host_only());
  const std::string raw_dir = job.rendezvous.substr(7) + "/raw-gloo";
  RawGloo raw(job.rank, job.world_size, raw_dir);
  const int n = job.world_size;

  std::ostringstream t;
  t << "# All-reduce across " << n << " processes: nubo's Gloo path against raw Gloo\n\n"
    << "Command: `" << command << "`\n\n"
    << "Machine: " << std::thread::hardware_concurrency()
    << " cores; the processes talk over loopback TCP. f32 sum, in place. nubo = "
       "Worker::all_reduce on a host team from Team::from_env(): up to 256 KiB the data travels "
       "with nubo's 32-byte call check in one exchange, above that the check is followed by "
       "Gloo's AllreduceRing (built once, then reused); Gloo = gloo::AllreduceRing<float>, "
       "built once per size. "
       "Both in the same run, interleaved round by round (ABBA); busbw = algbw x 2(n-1)/n, "
       "from the median round. Ratio = nubo / Gloo (1.00 = as fast); the last column compares "
       "the fastest round of each, which a busy machine disturbs least.\n\n"
    << "| size | nubo busbw GB/s | Gloo busbw GB/s | ratio | ratio of best rounds |\n"
    << "|---:|---:|---:|---:|---:|\n";
  for (std::size_t bytes : sizes()) {
    const std::size_t count = bytes / sizeof(float);
    const int it = iterations(bytes);
    std::vector<float> raw_buf(count, 1.0f);
    std::vector<float*> ptrs{raw_buf.data()};
    gloo::AllreduceRing<float> ring(raw.ctx, ptrs, static_cast<int>(count));
    std::vector<double> nubo_rounds, raw_rounds;
    team.run([&](nubo::Worker& w) {
      auto buf = w.alloc<float>(count);
      buf.write(std::vector<float>(count, 1.0f));
      w.all_reduce(buf);
      ring.run();
      // Rounds alternate which goes first (ABBA), so that a drift in the machine's load
      // weighs on both alike.
      auto time_nubo = [&] {
        w.barrier();
        const auto t0 = Clock::now();
        for (int i = 0; i < it; ++i) w.all_reduce(buf);
        nubo_rounds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / it);
      };
      auto time_raw = [&] {
        w.barrier();
        const auto t0 = Clock::now();
        for (int i = 0; i < it; ++i) ring.run();
        raw_rounds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / it);
      };
      for (int r = 0; r < kGlooRounds; ++r) {
        if (r % 2 == 0) {
          time_nubo();
          time_raw();
        } else {
          time_raw();
          time_nubo();
        }
      }
    });
    const double a = busbw(bytes, median(nubo_rounds), n);
    const double b = busbw(bytes, median(raw_rounds), n);
    const double best = *std::min_element(raw_rounds.begin(), raw_rounds.end()) /
                        *std::min_element(nubo_rounds.begin(), nubo_rounds.end());
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %.3f | %.3f | %.2f | %.2f |\n", human(bytes).c_str(),
                  a, b, a / b, best);
    t << line;
    if (job.rank == 0) std::fprintf(stderr, "%s done\n", human(bytes).c_str());
  }
  if (job.rank == 0) {
    std::ofstream(out_path) << t.str();
    std::fputs(t.str().c_str(), stdout);
  }
  return 0;
}

// Two teams on the same processes: the default one (shared memory between processes of one
// host) and one made with NUBO_SHM_DISABLE=1 (nubo over Gloo/TCP on loopback), raw Gloo
// AllreduceRing and one-thread memcpy, interleaved round by round.
int processes_mode(const std::string& out_path, const std::string& command) {
  const auto found = process_job();
  if (!found) return 2;
  const nubo::JobSpec& job = *found;
  auto [shm, tcp] = process_teams();
  RawGloo raw(job.rank, job.world_size, job.rendezvous.substr(7) + "/raw-gloo");
  const int n = job.world_size;
  std::ostringstream t;
  t << "# All-reduce between " << n << " processes on one host: shared memory against Gloo\n\n"
    << "Command: `" << command << "`\n\n"
    << "Machine: " << std::thread::hardware_concurrency()
    << " cores. f32 sum, in place, one worker per process. shm = Worker::all_reduce on the "
       "default team (the processes share a /dev/shm segment); nubo/Gloo = the same with "
       "NUBO_SHM_DISABLE=1 (Gloo over loopback TCP); Gloo = raw gloo::AllreduceRing; memcpy = "
       "one thread copying a buffer of that size. Interleaved round by round; medians. "
       "busbw = algbw x 2(n-1)/n (nccl-tests).\n\n"
    << "| size | shm us | shm busbw GB/s | nubo/Gloo GB/s | Gloo GB/s | memcpy GB/s | shm / memcpy "
       "| shm / Gloo |\n"
    << "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (std::size_t bytes : sizes()) {
    const std::size_t count = bytes / sizeof(float);
    const int it = iterations(bytes);
    std::vector<float> raw_buf(count, 1.0f);
    std::vector<float*> ptrs{raw_buf.data()};
    gloo::AllreduceRing<float> ring(raw.ctx, ptrs, static_cast<int>(count));
    std::vector<double> shm_rounds, tcp_rounds, raw_rounds, copy_rounds;
    std::vector<char> a(bytes, 1), b(bytes, 2);
    auto timed = [&](std::vector<double>& rounds, nubo::Worker& sync, auto body) {
      time_round(rounds, sync, it, body);
    };
    tcp.run([&](nubo::Worker& wt) {
      auto tbuf = wt.alloc<float>(count);
      shm.run([&](nubo::Worker& ws) {
        auto sbuf = ws.alloc<float>(count);
        sbuf.write(std::vector<float>(count, 1.0f));
        tbuf.write(std::vector<float>(count, 1.0f));
        ws.all_reduce(sbuf);
        wt.all_reduce(tbuf);
        ring.run();
        for (int r = 0; r < kGlooRounds; ++r) {
          timed(shm_rounds, ws, [&](int) { ws.all_reduce(sbuf); });
          timed(tcp_rounds, ws, [&](int) { wt.all_reduce(tbuf); });
          timed(raw_rounds, ws, [&](int) { ring.run(); });
          timed(copy_rounds, ws, [&](int i) {  // rank 0 alone: one thread's memcpy
            if (job.rank != 0) return;
            std::memcpy(b.data(), a.data(), bytes);
            a[static_cast<std::size_t>(i) % bytes] = b[0];
          });
        }
      });
    });
    const double s = busbw(bytes, median(shm_rounds), n);
    const double g = busbw(bytes, median(tcp_rounds), n);
    const double r = busbw(bytes, median(raw_rounds), n);
    const double c = static_cast<double>(bytes) / median(copy_rounds) / 1e9;
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n",
                  human(bytes).c_str(), median(shm_rounds) * 1e6, s, g, r, c, s / c,
                  s / std::max(g, r));
    t << line;
    if (job.rank == 0) std::fprintf(stderr, "%s done\n", human(bytes).c_str());
  }
  append_table(out_path, job, t.str());
  return 0;
}

// all_to_all (each rank sends `bytes` in all, one block to each rank), as nccl-tests' alltoall
// reports it: algbw = bytes / time, busbw = algbw x (n-1)/n. Two host workers in one process
// (rank 0 alone, its slot idle on rank 1), the default team between the processes (shared
// memory), the same with NUBO_SHM_DISABLE=1 (Gloo over loopback), raw gloo::alltoall and one
// thread's memcpy, interleaved round by round; medians.
int all_to_all_mode(const std::string& out_path, const std::string& command) {
  const auto found = process_job();
  if (!found) return 2;
  const nubo::JobSpec& job = *found;
  auto [shm, tcp] = process_teams();
  nubo::Team local(std::vector<nubo::Device>(2, host_only().front()));
  RawGloo raw(job.rank, job.world_size, job.rendezvous.substr(7) + "/raw-gloo-a2a");
  const int n = job.world_size;
  const auto bus = [n](std::size_t bytes, double seconds) {
    return static_cast<double>(bytes) / seconds / 1e9 * (n - 1) / n;
  };
  std::ostringstream t;
  t << "# All-to-all: in one process, between " << n << " processes, and raw Gloo\n\n"
    << "Command: `" << command << "`\n\n"
    << "Machine: " << std::thread::hardware_concurrency()
    << " cores. f32, each rank sends `size` bytes in all (one block per rank). 1 process = "
       "Worker::all_to_all on a team of two host workers in one process; shm = the same "
       "between two processes of one worker each (a /dev/shm segment); nubo/Gloo = with "
       "NUBO_SHM_DISABLE=1 (Gloo over loopback TCP); Gloo = raw gloo::alltoall; memcpy = one "
       "thread copying `size` bytes. Interleaved round by round; medians. busbw = algbw x "
       "(n-1)/n (nccl-tests' alltoall).\n\n"
    << "| size | 1 process GB/s | shm GB/s | nubo/Gloo GB/s | Gloo GB/s | memcpy GB/s | "
       "nubo/Gloo / Gloo | shm / Gloo |\n"
    << "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (std::size_t bytes : sizes()) {
    const std::size_t count = bytes / sizeof(float);
    const int it = iterations(bytes);
    std::vector<float> raw_in(count, 1.0f), raw_out(count);
    std::vector<double> local_rounds, shm_rounds, tcp_rounds, raw_rounds, copy_rounds;
    std::vector<char> a(bytes, 1), b(bytes, 2);
    std::vector<std::optional<nubo::Buffer<float>>> lin(2), lout(2);
    if (job.rank == 0) {
      local.run([&](nubo::Worker& wl) {
        const auto me = static_cast<std::size_t>(wl.rank());
        lin[me].emplace(wl.alloc<float>(count));
        lout[me].emplace(wl.alloc<float>(count));
        lin[me]->write(std::vector<float>(count, 1.0f));
        wl.all_to_all(*lin[me], *lout[me]);
      });
    }
    auto timed = [&](std::vector<double>& rounds, nubo::Worker& sync, auto body) {
      time_round(rounds, sync, it, body);
    };
    auto raw_all_to_all = [&] {
      gloo::AlltoallOptions opts(raw.ctx);
      opts.setInput(raw_in.data(), count);
      opts.setOutput(raw_out.data(), count);
      gloo::alltoall(opts);
    };
    tcp.run([&](nubo::Worker& wt) {
      auto tin = wt.alloc<float>(count);
      auto tout = wt.alloc<float>(count);
      shm.run([&](nubo::Worker& ws) {
        auto sin = ws.alloc<float>(count);
        auto sout = ws.alloc<float>(count);
        sin.write(std::vector<float>(count, 1.0f));
        tin.write(std::vector<float>(count, 1.0f));
        ws.all_to_all(sin, sout);
        wt.all_to_all(tin, tout);
        raw_all_to_all();
        for (int r = 0; r < kGlooRounds; ++r) {
          ws.barrier();  // rank 0 alone: two workers of its own, timed between their barriers
          if (job.rank == 0) {
            local.run([&](nubo::Worker& wl) {
              const auto me = static_cast<std::size_t>(wl.rank());
              wl.barrier();
              const auto t0 = Clock::now();
              for (int i = 0; i < it; ++i) wl.all_to_all(*lin[me], *lout[me]);
              const double s = std::chrono::duration<double>(Clock::now() - t0).count() / it;
              if (me == 0) local_rounds.push_back(s);
            });
          }
          timed(shm_rounds, ws, [&](int) { ws.all_to_all(sin, sout); });
          timed(tcp_rounds, ws, [&](int) { wt.all_to_all(tin, tout); });
          timed(raw_rounds, ws, [&](int) { raw_all_to_all(); });
          timed(copy_rounds, ws, [&](int i) {
            if (job.rank != 0) return;
            std::memcpy(b.data(), a.data(), bytes);
            a[static_cast<std::size_t>(i) % bytes] = b[0];
          });
        }
      });
    });
    const double l = local_rounds.empty() ? 0 : bus(bytes, median(local_rounds));  // rank 0
    const double s = bus(bytes, median(shm_rounds));
    const double g = bus(bytes, median(tcp_rounds));
    const double r = bus(bytes, median(raw_rounds));
    const double c = static_cast<double>(bytes) / median(copy_rounds) / 1e9;
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n",
                  human(bytes).c_str(), l, s, g, r, c, g / r, s / r);
    t << line;
    if (job.rank == 0) std::fprintf(stderr, "%s done\n", human(bytes).c_str());
  }
  append_table(out_path, job, t.str());
  return 0;
}

#endif  // NUBO_HAVE_GLOO

int one(int workers, std::size_t bytes, int it) {
  nubo::Team team(
      std::vector<nubo::Device>(static_cast<std::size_t>(workers), host_only().front()));
  std::printf("%.9f\n", time_team(team, bytes, 1, it));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  std::string out = "/dev/null";
  std::string command = "benchmarks/bench_allreduce.sh";
  long workers = 2, bytes = 64 << 20, it = 10;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--out") out = argv[i + 1];
    if (flag == "--command") command = argv[i + 1];
    if (flag == "--workers") workers = std::strtol(argv[i + 1], nullptr, 10);
    if (flag == "--bytes") bytes = std::strtol(argv[i + 1], nullptr, 10);
    if (flag == "--iterations") it = std::strtol(argv[i + 1], nullptr, 10);
  }
  try {
    if (mode == "local") return local(out, command);
#if NUBO_HAVE_GLOO
    if (mode == "gloo") return gloo_mode(out, command);
    if (mode == "processes") return processes_mode(out, command);
    if (mode == "all_to_all") return all_to_all_mode(out, command);
#else
    if (mode == "gloo" || mode == "processes" || mode == "all_to_all") {
      std::fprintf(stderr, "this build has no Gloo\n");
      return 2;
    }
#endif
    if (mode == "one" && workers > 0 && bytes > 0 && it > 0)
      return one(static_cast<int>(workers), static_cast<std::size_t>(bytes), static_cast<int>(it));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_allreduce: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: bench_allreduce local|gloo|processes [--out FILE] [--command TEXT]\n"
               "       bench_allreduce one [--workers N] [--bytes B] [--iterations I]\n");
  return 2;
}
