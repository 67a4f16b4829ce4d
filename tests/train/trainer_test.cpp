// The trainer in-process: data parallelism is exact (1 vs N workers, buckets vs none), resume is
// exact, checkpoints are checked, and bad options get clear errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "scoped_env.hpp"

using namespace train_test;

namespace {

std::vector<float> train_steps(int workers, nubo::TrainerOptions o, int steps,
                               std::vector<double>* losses = nullptr) {
  auto data = synthetic(512);
  auto team = cpu_team(workers);
  nubo::DataParallelTrainer t(team, o, data);
  for (int i = 0; i < steps; ++i) {
    auto s = t.step();
    if (losses) losses->push_back(s.loss);
  }
  return t.parameters();
}

}  // namespace

TEST_CASE("1 worker and N workers reach the same parameters", "[train]") {
  auto o = small_options();
  o.bucket_bytes = 1024;  // several buckets
  for (auto opt : {nubo::Optimizer::sgd, nubo::Optimizer::adam}) {
    o.optimizer = opt;
    o.lr = opt == nubo::Optimizer::adam ? 0.01f : 0.1f;
    // 20 steps of 64 rows over 512 rows: crosses two epoch boundaries (reshuffles).
    auto one = train_steps(1, o, 20);
    auto three = train_steps(3, o, 20);
    CAPTURE(static_cast<int>(opt));
    REQUIRE(one.size() == three.size());
    CHECK(max_abs_diff(one, three) < 1e-4);
  }
}

TEST_CASE("bucketed all-reduce gives the unbucketed result", "[train]") {
  auto o = small_options();
  o.bucket_bytes = 0;
  auto data = synthetic(512);
  auto team = cpu_team(2);
  nubo::DataParallelTrainer whole(team, o, data);
  CHECK(whole.bucket_count() == 1);
  o.bucket_bytes = 256;
  nubo::DataParallelTrainer cut(team, o, data);
  CHECK(cut.bucket_count() == 3);  // one per layer at this size
  for (int i = 0; i < 12; ++i) {
    whole.step();
    cut.step();
  }
  CHECK(max_abs_diff(whole.parameters(), cut.parameters()) == 0.0);
}

TEST_CASE("training lowers the loss and evaluation counts every row", "[train]") {
  auto data = synthetic(1024);
  auto team = cpu_team(2);
  nubo::DataParallelTrainer t(team, small_options(), data);
  auto before = t.evaluate(*data);
  t.fit(5);
  auto after = t.evaluate(*data);
  CHECK(after.samples == 1024);
  CHECK(after.loss < before.loss);
  CHECK(after.accuracy > 0.6);
}

TEST_CASE("a resumed run repeats the losses of an uninterrupted one", "[train]") {
  auto dir = temp_dir("resume");
  auto data = synthetic(500);  // 8 steps per epoch, the last one short
  for (auto opt : {nubo::Optimizer::sgd, nubo::Optimizer::adam}) {
    auto o = small_options();
    o.optimizer = opt;
    o.lr = opt == nubo::Optimizer::adam ? 0.01f : 0.1f;
    o.lr_decay_steps = 40;
    auto team = cpu_team(2);
    nubo::DataParallelTrainer a(team, o, data);
    for (int i = 0; i < 5; ++i) a.step();
    const auto path = (dir / "mid.nubo").string();
    a.save(path);
    std::vector<double> expect;
    for (int i = 0; i < 12; ++i) expect.push_back(a.step().loss);  // crosses an epoch

    auto team1 = cpu_team(1);  // a different team size resumes too
    nubo::DataParallelTrainer b(team1, o, data);
    b.load(path);
    CHECK(b.steps_done() == 5);
    std::vector<double> got;
    for (int i = 0; i < 12; ++i) got.push_back(b.step().loss);
    for (std::size_t i = 0; i < expect.size(); ++i)
      CHECK(got[i] == Approx(expect[i]).epsilon(1e-5));
    CHECK(max_abs_diff(a.parameters(), b.parameters()) < 1e-5);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("same team size resumes bit for bit", "[train]") {
  auto dir = temp_dir("exact");
  auto data = synthetic(300);
  auto o = small_options();
  auto team = cpu_team(2);
  nubo::DataParallelTrainer a(team, o, data);
  for (int i = 0; i < 3; ++i) a.step();
  a.save((dir / "c.nubo").string());
  std::vector<double> expect, got;
  for (int i = 0; i < 8; ++i) expect.push_back(a.step().loss);
  nubo::DataParallelTrainer b(team, o, data);
  b.load((dir / "c.nubo").string());
  for (int i = 0; i < 8; ++i) got.push_back(b.step().loss);
  CHECK(got == expect);
  CHECK(a.parameters() == b.parameters());
  std::filesystem::remove_all(dir);
}

TEST_CASE("checkpoints of another model, damaged ones, and the fallback", "[train]") {
  auto dir = temp_dir("ckpt");
  auto data = synthetic(256);
  auto team = cpu_team(1);
  auto o = small_options();
  o.checkpoint_dir = (dir / "run").string();
  o.checkpoint_every = 2;
  nubo::DataParallelTrainer t(team, o, data);
  t.fit(2);  // 8 steps: checkpoints at 2, 4, 6, 8; the newest 3 are kept
  CHECK(std::filesystem::exists(t.checkpoint_path(8)));
  CHECK(std::filesystem::exists(t.checkpoint_path(6)));
  CHECK(!std::filesystem::exists(t.checkpoint_path(2)));

  SECTION("another model") {
    auto o2 = o;
    o2.layers = {20, 8, 4};
    // Made on that directory, it would continue from its checkpoints: refused, naming both.
    CHECK_THROWS_WITH(nubo::DataParallelTrainer(team, o2, data),
                      Catch::Contains("20-32-16-4") && Catch::Contains("20-8-4"));
    o2.checkpoint_dir = (dir / "other").string();  // (fresh here would set run's aside)
    nubo::DataParallelTrainer other(team, o2, data);
    try {
      other.load(t.checkpoint_path(8));
      FAIL("loaded a checkpoint of another model");
    } catch (const nubo::Error& e) {
      CHECK(e.code() == nubo::Errc::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains("20-32-16-4") && Catch::Contains("20-8-4"));
    }
  }
  SECTION("a corrupt newest checkpoint falls back to the previous one") {
    {
      std::fstream f(t.checkpoint_path(8), std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(200);
      const char junk[64] = {};
      f.write(junk, sizeof junk);
    }
    nubo::DataParallelTrainer r(team, o, data);  // continues from the newest good one
    CHECK(r.resumed_from() == t.checkpoint_path(6));
    CHECK(r.resume_latest() == t.checkpoint_path(6));
    CHECK(r.steps_done() == 6);
    try {
      r.load(t.checkpoint_path(8));
      FAIL("loaded a damaged checkpoint");
    } catch (const nubo::Error& e) {
      CHECK(e.code() == nubo::Errc::corrupt);
    }
  }
  SECTION("a well-formed checkpoint whose step and data position do not fit is set aside too") {
    // Checkpoint 8, its meta.json rewritten as a writer that knows the format would: checksums
    // and all intact, only the numbers wrong.
    const auto original = (dir / "original.nubo").string();
    std::filesystem::copy_file(t.checkpoint_path(8), original);
    int tampers = 0;
    const auto tampered = [&](const std::string& field, std::int64_t value) {
      const auto work = dir / ("tamper-" + std::to_string(++tampers));
      nubo::transfer::unpack(original, work.string(), {.sync = false});
      auto meta = nlohmann::json::parse(std::ifstream(work / "meta.json"));
      meta[field] = value;
      std::ofstream(work / "meta.json") << meta.dump();
      std::vector<std::string> files;
      for (const auto& e : std::filesystem::directory_iterator(work))
        files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      nubo::transfer::pack(files, t.checkpoint_path(8), {.sync = false});
    };
    for (auto [field, value] : {std::pair<std::string, std::int64_t>{"step", 1000000000000000000},
                                {"position", 1000000},
                                {"step", 7},
                                {"epoch", 5}}) {
      INFO(field << " = " << value);
      tampered(field, value);
      nubo::DataParallelTrainer r(team, o, data);  // as a damaged one: the previous is used
      CHECK(r.resumed_from() == t.checkpoint_path(6));
      CHECK(r.steps_done() == 6);
      CHECK_THROWS_WITH(r.load(t.checkpoint_path(8)), Catch::Contains("do not fit together"));
    }
  }
  SECTION("a run never resumes past its end") {
    nubo::DataParallelTrainer r(team, o, data);
    CHECK(r.steps_done() == 8);
    CHECK_THROWS_WITH(r.fit(1), Catch::Contains("past the 4 steps of 1 epoch:"));
    CHECK(r.fit(2) == nubo::FitResult::finished);
  }
  SECTION("a missing checkpoint") {
    CHECK_THROWS_AS(t.load((dir / "nope.nubo").string()), nubo::Error);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("layer sizes that make no sense are refused", "[train]") {
  auto data = synthetic(64);
  auto team = cpu_team(1);
  auto expect_invalid = [&](std::vector<std::size_t> layers, const char* says) {
    auto o = small_options();
    o.layers = std::move(layers);
    try {
      nubo::DataParallelTrainer t(team, o, data);
      FAIL("accepted bad layer sizes");
    } catch (const nubo::Error& e) {
      CHECK(e.code() == nubo::Errc::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains(says));
    }
  };
  expect_invalid({}, "at least an input and an output");
  expect_invalid({20}, "at least an input and an output");
  expect_invalid({20, 0, 4}, "width 1 is 0");
  expect_invalid({10, 4}, "20 features");
  expect_invalid({20, 3}, "4 classes");
  auto o = small_options();
  o.global_batch = 0;
  CHECK_THROWS_AS(nubo::DataParallelTrainer(team, o, data), nubo::Error);
}

TEST_CASE("the profile follows the schema the cost model reads", "[train]") {
  auto data = synthetic(256);
  auto team = cpu_team(2);
  nubo::DataParallelTrainer t(team, small_options(), data);
  t.fit(1);
  auto json = nubo::profile_json(t.profile());
  auto p = nubo::cost::Profile::parse(json, "test");
  CHECK(p.devices == 2);
  CHECK(p.backend == "cpu");
  CHECK(p.global_batch == 64);
  CHECK(p.steps == 4);
  CHECK(p.compute_time_s > 0);
  CHECK(p.allreduce_bytes == static_cast<double>(t.parameter_count() * 4));
  CHECK(p.dataset_samples == 256);
}

TEST_CASE("a checkpoint records its team: another team resumes with a line, or is refused",
          "[train]") {
  auto dir = temp_dir("team");
  auto data = synthetic(256);
  auto o = small_options();
  auto two = cpu_team(2);
  nubo::DataParallelTrainer a(two, o, data);
  for (int i = 0; i < 3; ++i) a.step();
  a.save((dir / "c.nubo").string());
  auto one = cpu_team(1);
  nubo::DataParallelTrainer b(one, o, data);
  b.load((dir / "c.nubo").string());  // allowed: the state is replicated
  CHECK(b.steps_done() == 3);
  CHECK(b.parameters() == a.parameters());
  o.strict_resume = true;
  nubo::DataParallelTrainer strict(one, o, data);
  try {
    strict.load((dir / "c.nubo").string());
    FAIL("strict_resume loaded another team's checkpoint");
  } catch (const nubo::Error& e) {
    CHECK(e.code() == nubo::Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("written by 2 host worker(s)") &&
                             Catch::Contains("resuming on 1 host worker(s)"));
  }
  nubo::DataParallelTrainer same(two, o, data);  // the same team is fine
  same.load((dir / "c.nubo").string());
  CHECK(same.steps_done() == 3);
  std::filesystem::remove_all(dir);
}

namespace {

// Trains `epochs` epochs with a checkpoint every `every` steps into `dir`; returns the
// parameters and, by step, each checkpoint's params.bin.
struct CheckpointedRun {
  std::vector<float> parameters;
  std::map<std::string, std::vector<std::byte>> params_by_file;
  nubo::cost::Profile profile;
};
CheckpointedRun run_with_checkpoints(bool async, const std::filesystem::path& dir, int epochs,
                                     std::vector<std::size_t> layers = {20, 32, 16, 4}) {
  auto data = synthetic(512);
  auto team = cpu_team(2);
  auto o = small_options();
  o.layers = std::move(layers);
  o.checkpoint_dir = dir.string();
  o.checkpoint_every = 3;
  o.checkpoint_keep = 100;
  o.async_checkpoints = async;
  nubo::DataParallelTrainer t(team, o, data);
  t.fit(epochs);
  CheckpointedRun run{t.parameters(), {}, t.profile()};
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    nubo::transfer::Reader r(e.path().string());
    run.params_by_file[e.path().filename().string()] =
        r.read("params.bin", 0, static_cast<std::size_t>(r.find("params.bin")->size));
  }
  return run;
}

}  // namespace

TEST_CASE("asynchronous checkpoints hold what synchronous ones hold, and resume exactly",
          "[train]") {
  auto dir = temp_dir("async");
  auto sync = run_with_checkpoints(false, dir / "sync", 3);
  auto async = run_with_checkpoints(true, dir / "async", 3);
  CHECK(async.parameters == sync.parameters);
  REQUIRE(async.params_by_file.size() == 8);  // 24 steps: every 3rd
  CHECK(async.params_by_file == sync.params_by_file);

  // Resumed from a checkpoint written in the background: the uninterrupted run's result.
  auto data = synthetic(512);
  auto team = cpu_team(2);
  auto o = small_options();
  o.checkpoint_dir = (dir / "async").string();
  nubo::DataParallelTrainer t(team, o, data);
  t.load((dir / "async/ckpt-0000000012.nubo").string());
  t.fit(3);
  CHECK(t.parameters() == sync.parameters);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an asynchronous checkpoint stalls training for its copy only", "[train]") {
  // Big enough (about 5 MB of state) that writing it costs far more than copying it.
  auto dir = temp_dir("stall");
  const std::vector<std::size_t> wide = {20, 1024, 1024, 4};
  auto sync = run_with_checkpoints(false, dir / "sync", 2, wide);
  auto async = run_with_checkpoints(true, dir / "async", 2, wide);
  INFO("stall per checkpoint: synchronous "
       << sync.profile.checkpoint_stall_s << " s, asynchronous " << async.profile.checkpoint_stall_s
       << " s");
  CHECK(async.profile.checkpoint_stall_s < sync.profile.checkpoint_stall_s);
  CHECK(async.profile.checkpoint_time_s > 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "checkpoint_auto follows Daly for the measured write time and plans again when it "
    "changes",
    "[train]") {
  // The write takes the injected delay and a little more (in memory, where the write itself is
  // quick): 0.5 s, then 0.15 s.
  nubo_test::ScopedEnv delay("NUBO_CHECKPOINT_DELAY", "0.5");
  const bool shm = std::filesystem::is_directory("/dev/shm");
  auto dir = shm ? std::filesystem::path("/dev/shm/nubo-train-auto-" + std::to_string(::getpid()))
                 : temp_dir("auto");
  auto data = synthetic(512);
  auto team = cpu_team(1);
  auto o = small_options();
  o.checkpoint_dir = dir.string();
  o.checkpoint_auto = true;
  o.mtbi_s = 2.0;
  nubo::DataParallelTrainer t(team, o, data);
  const double slow = nubo::cost::checkpoint_plan(0, 0.5, 2.0, 0).daly_interval_s;   // ~1.10 s
  const double fast = nubo::cost::checkpoint_plan(0, 0.15, 2.0, 0).daly_interval_s;  // ~0.68 s
  double first = -1, before = 0, after = 0;
  int slow_checkpoints = 0;
  const auto start = std::chrono::steady_clock::now();
  t.fit(1000000, [&](const nubo::TrainProgress& p) {
    if (first < 0) first = p.checkpoint_interval_s;
    // Two checkpoints at the slow interval, then the store gets faster.
    if (before == 0 && p.checkpointed && p.checkpoint_interval_s > 0 && ++slow_checkpoints == 2) {
      before = p.checkpoint_interval_s;
      ::setenv("NUBO_CHECKPOINT_DELAY", "0.15", 1);
    }
    if (before > 0 && p.checkpoint_interval_s < 0.85 * before) {
      after = p.checkpoint_interval_s;
      return false;
    }
    return std::chrono::steady_clock::now() - start < std::chrono::seconds(30);
  });
  INFO("planned " << before << " s then " << after << " s; Daly: " << slow << " s, " << fast
                  << " s");
  // The measured write is the injected delay plus the write itself, which a loaded machine
  // stretches: each interval is Daly's for at least the delay, and for less than the delay
  // plus 0.5 s (before) or 0.25 s (after), whatever else the machine runs.
  const auto daly = [](double delta) {
    return nubo::cost::checkpoint_plan(0, delta, 2.0, 0).daly_interval_s;
  };
  CHECK(first == 0);  // before the first write: none yet
  CHECK(before >= slow * 0.999);
  CHECK(before < daly(1.0));
  CHECK(after >= fast * 0.999);
  CHECK(after < daly(0.4));
  auto profile = t.profile();
  CHECK(profile.checkpoint_interval_s == after);
  CHECK(profile.checkpoint_expected_waste > 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a fresh run sets an earlier run's checkpoints aside instead of being pruned by them",
          "[train]") {
  // The earlier run went further (higher steps) than the fresh one will: keep-N by step number
  // deleted the fresh run's checkpoints as soon as they were written, and a resume took the old
  // run's.
  auto dir = temp_dir("fresh");
  auto data = synthetic(512);
  auto team = cpu_team(1);
  auto o = small_options();
  o.checkpoint_dir = dir.string();
  o.checkpoint_every = 2;
  {
    nubo::DataParallelTrainer earlier(team, o, data);
    earlier.fit(2);  // 16 steps: checkpoints 12, 14, 16 kept
  }
  o.fresh = true;
  nubo::DataParallelTrainer fresh(team, o, data);
  fresh.fit(1, [](const nubo::TrainProgress& p) { return p.step < 5; });
  std::vector<std::string> here, aside;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_directory()) {
      CHECK(e.path().filename().string().starts_with("earlier-"));
      for (const auto& f : std::filesystem::directory_iterator(e.path()))
        aside.push_back(f.path().filename().string());
    } else {
      here.push_back(e.path().filename().string());
    }
  }
  std::sort(here.begin(), here.end());
  std::sort(aside.begin(), aside.end());
  CHECK(here == std::vector<std::string>{"ckpt-0000000002.nubo", "ckpt-0000000004.nubo",
                                         "ckpt-0000000005.nubo"});
  CHECK(aside == std::vector<std::string>{"ckpt-0000000012.nubo", "ckpt-0000000014.nubo",
                                          "ckpt-0000000016.nubo"});
  o.fresh = false;
  nubo::DataParallelTrainer resumed(team, o, data);
  CHECK(resumed.steps_done() == 5);
  std::filesystem::remove_all(dir);
}

TEST_CASE("checkpoint_auto without a mean time between interruptions is refused", "[train]") {
  auto data = synthetic(64);
  auto team = cpu_team(1);
  auto o = small_options();
  o.checkpoint_auto = true;
  o.checkpoint_dir = "/tmp/nubo-unused";
  CHECK_THROWS_WITH(nubo::DataParallelTrainer(team, o, data), Catch::Contains("mtbi_s"));
  o.mtbi_s = 3600;
  o.checkpoint_every = 10;
  CHECK_THROWS_WITH(nubo::DataParallelTrainer(team, o, data),
                    Catch::Contains("leave checkpoint_every"));
}
