// The reusable pieces: the pipeline, the journal, progress and the auto codec.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "transfer/journal.hpp"
#include "transfer/pipeline/auto_codec.hpp"
#include "transfer/pipeline/pipeline.hpp"
#include "transfer/pipeline/progress.hpp"

using namespace nubo::transfer;

TEST_CASE("the pipeline consumes in production order with few slots and many workers") {
  struct Job {
    int n = 0;
    int squared = 0;
  };
  int next = 0;
  std::vector<int> seen;
  PipelineStages<Job> s;
  s.produce = [&](Job& j) {
    if (next == 1000) return false;
    j.n = next++;
    return true;
  };
  s.work = [](Job& j) {
    if (j.n % 7 == 0) std::this_thread::yield();
    j.squared = j.n * j.n;
  };
  s.consume = [&](Job& j) {
    REQUIRE(j.squared == j.n * j.n);
    seen.push_back(j.n);
  };
  run_pipeline(3, 4, s);
  REQUIRE(seen.size() == 1000);
  for (int i = 0; i < 1000; ++i) REQUIRE(seen[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("the first failure of any stage stops the pipeline and is rethrown") {
  struct Job {
    int n = 0;
  };
  for (int stage = 0; stage < 3; ++stage) {
    std::atomic<int> next{0};
    PipelineStages<Job> s;
    s.produce = [&](Job& j) {
      j.n = next++;
      if (stage == 0 && j.n == 50) throw nubo::Error(nubo::Errc::io, "read failed");
      return true;  // endless otherwise: only the failure ends it
    };
    s.work = [&](Job& j) {
      if (stage == 1 && j.n == 50) throw nubo::Error(nubo::Errc::corrupt, "bad chunk");
    };
    s.consume = [&](Job& j) {
      if (stage == 2 && j.n == 50) throw nubo::Error(nubo::Errc::cancelled, "stop");
    };
    CHECK_THROWS_AS(run_pipeline(4, 2, s), nubo::Error);
  }
}

TEST_CASE("a journal keeps whole records, drops a torn tail, and belongs to one job") {
  nubo_test::TempDir dir;
  auto path = dir / "j";
  {
    auto j = Journal::open(path, "job A");
    CHECK(j.loaded().empty());
    std::vector<std::byte> p(100, std::byte{7});
    j.append(1, p);
    j.append(2, {});
    j.commit(true);
    j.append(3, p);  // never committed
  }
  {
    auto j = Journal::open(path, "job A");
    REQUIRE(j.loaded().size() == 2);
    CHECK(j.loaded()[0].type == 1);
    CHECK(j.loaded()[0].payload.size() == 100);
    CHECK(j.loaded()[1].type == 2);
  }
  // A torn last record (a crash mid-write) is cut off; the earlier one stays.
  auto content = nubo_test::read_file(path);
  nubo_test::write_file(path, content.substr(0, content.size() - 3));
  {
    auto j = Journal::open(path, "job A");
    CHECK(j.loaded().size() == 1);
  }
  {
    auto j = Journal::open(path, "job B");
    CHECK(j.loaded().empty());
    CHECK(j.discarded_other());
    // Held: a second opener is refused while this one is open.
    CHECK_THROWS_WITH(Journal::open(path, "job B"), Catch::Contains("another nubo process"));
    j.remove();
  }
  CHECK(::access(path.c_str(), F_OK) != 0);
}

TEST_CASE("progress: the callback can cancel, rates and ETA are sane") {
  int calls = 0;
  ProgressTracker t(
      [&](const nubo::transfer::Progress& p) {
        ++calls;
        CHECK(p.bytes_done <= p.bytes_total);
        return p.bytes_done < 500;
      },
      1000, 2);
  t.add_skipped(100);
  t.add_done(300);
  t.report(true);
  CHECK(calls == 1);
  auto snap = t.snapshot();
  CHECK(snap.bytes_done == 400);
  CHECK(snap.bytes_skipped == 100);
  t.add_done(200);
  CHECK_THROWS_AS(t.report(true), nubo::Error);
}

TEST_CASE("auto: the output queue's fill moves the choice once it has been full") {
  Compressor probe;
  auto text = nubo_test::text_bytes(1 << 20, 9);
  auto level_of = [&](AutoCodec& a) {
    auto s = a.choose(as_bytes(text), probe).setting;
    return s.codec == ChunkCodec::zstd ? s.level : 0;  // lz4 and none: lighter than any zstd
  };
  AutoCodec a(2, 12, 100e6);
  auto start = level_of(a);
  for (int i = 0; i < 10; ++i) a.observe_backlog(0);  // empty at the start: not a signal yet
  CHECK(level_of(a) == start);
  for (int i = 0; i < 30; ++i) a.observe_backlog(1);  // the link is behind: compress harder
  auto harder = level_of(a);
  CHECK(harder > start);
  for (int i = 0; i < 30; ++i) a.observe_backlog(0);  // the link waits: compress lighter
  CHECK(level_of(a) < harder);
}

TEST_CASE("auto: incompressible data is stored raw, and a slow output earns stronger compression") {
  Compressor probe;
  auto random = nubo_test::random_bytes(1 << 20, 9);
  auto text = nubo_test::text_bytes(1 << 20, 9);
  AutoCodec fast(2, 12, 0);
  CHECK(fast.choose(as_bytes(random), probe).setting.codec == ChunkCodec::none);

  AutoCodec slow(8, 12, 10e6);  // a 10 MB/s link and 8 cores: compress hard
  auto c = slow.choose(as_bytes(text), probe);
  CHECK(c.setting.codec == ChunkCodec::zstd);
  CHECK(c.setting.level >= 3);

  AutoCodec quick(1, 12, 5e9);  // a 5 GB/s output and one core: compression only slows it
  auto q = quick.choose(as_bytes(text), probe);
  CHECK((q.setting.codec == ChunkCodec::none || q.setting.codec == ChunkCodec::lz4));

  // A chunk of mixed data (a bundle of text files with a compressed one in the middle) is judged
  // by all of it, not by its middle.
  auto mixed = text.substr(0, 3 << 18) + random.substr(0, 1 << 18);
  mixed.insert(mixed.size() / 2 - (1 << 17), random.substr(0, 1 << 18));
  mixed.resize(1 << 20);
  CHECK(slow.choose(as_bytes(mixed), probe).setting.codec == ChunkCodec::zstd);

  // What a level achieved on already-compressed chunks says nothing about text: the kinds are
  // learned apart, and levels compare on the same footing.
  AutoCodec learner(8, 3, 10e6);  // zstd-3 at most: the strongest, and the one observed
  auto before = learner.choose(as_bytes(text), probe).setting;
  for (int i = 0; i < 20; ++i) {
    AutoCodec::Choice seen;
    seen.setting = {ChunkCodec::zstd, 3};
    seen.probe_ratio = 0.9;
    learner.observe(seen, 1 << 20, 1 << 20, 0.01);  // no gain at all
  }
  CHECK(learner.choose(as_bytes(text), probe).setting == before);

  // The measured output rate moves the choice when no target is set.
  AutoCodec adaptive(8, 12, 0);
  for (int i = 0; i < 20; ++i) adaptive.observe_output(1 << 20, 0.1);  // 10 MB/s measured
  CHECK(adaptive.choose(as_bytes(text), probe).setting.codec == ChunkCodec::zstd);
}
