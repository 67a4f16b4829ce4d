// An abort from outside the workers (a health watch, a failed peer process) while they are
// reducing: every worker reads the others' buffers in that phase, so none may return, and free
// its buffer, before all have finished it. Run under ASan, returning early shows as a
// use-after-free; here every worker must also see the abort, once.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "nubo/error.hpp"
#include "parallel/collectives/local_group.hpp"

using namespace std::chrono_literals;

TEST_CASE("an abort during a reduction waits for every worker before anyone frees its buffer",
          "[parallel][abort]") {
  constexpr int kWorkers = 3;
  constexpr std::size_t kCount = std::size_t{4} << 20;  // 16 MiB each: a reduction takes a while
  for (int round = 0; round < 20; ++round) {  // the abort lands at a different moment each time
    nubo::parallel::LocalGroup group(kWorkers, 0, kWorkers, 60s, nullptr);
    std::atomic<int> cancelled{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&, w] {
        auto buf = std::make_unique<float[]>(kCount);
        nubo::parallel::Op op;
        op.kind = nubo::parallel::OpKind::all_reduce;
        op.count = kCount;
        op.in = op.out = buf.get();
        try {
          for (std::uint64_t seq = 0; seq < 100000; ++seq) group.run(w, op, seq);
        } catch (const nubo::Error& e) {
          if (e.code() == nubo::Errc::cancelled) ++cancelled;
        }
        buf.reset();  // at once, as a worker's stack unwinding frees its buffers
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + 7 * round));
    group.abort("a GPU failed");
    for (auto& t : workers) t.join();
    CHECK(cancelled == kWorkers);
  }
}
