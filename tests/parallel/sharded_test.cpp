// The sharded optimizer in one process: the layout's padding, stages 1 and 2 bit for bit the
// replicated optimizer at 1 to 5 workers, stage 3's gather and release, mixed precision with
// loss scaling, compressed gradients, checkpoints across world sizes, and bad input.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <tuple>

#include "common/crc32c.hpp"
#include "nubo/error.hpp"
#include "nubo/optimizer.hpp"
#include "process_helpers.hpp"
#include "rank_checks.hpp"
#include "sharded_run.hpp"
#include "workers.hpp"

using namespace nubo;
using nubo_test::run_sharded;
using nubo_test::ShardedRun;

namespace {

// Runs fn on every worker of a team of n; returns rank 0's result.
template <class Fn>
std::vector<float> on_team(Team& team, Fn fn) {
  std::vector<float> out;
  std::mutex mutex;
  team.run([&](Worker& w) {
    auto r = fn(w);
    if (w.rank() == 0) {
      std::lock_guard<std::mutex> lock(mutex);
      out = std::move(r);
    }
  });
  return out;
}

// On a worker thread, where Catch2 may not be used: whether fn throws a nubo::Error saying `text`.
template <class Fn>
bool refused(Fn fn, const std::string& text) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(e.what()).find(text) != std::string::npos;
  }
  return false;
}

ShardedOptions adamw(int stage, DType precision = DType::f32) {
  ShardedOptions o;
  o.optimizer = OptimizerKind::adamw;
  o.lr = 0.01f;
  o.weight_decay = 0.01f;
  o.stage = stage;
  o.precision = precision;
  return o;
}

}  // namespace

TEST_CASE("a ZeRO stage's plan says what it shards, and only 0 to 3 are stages") {
  using nubo::StagePlan;
  const auto plan = [](int stage) {
    const auto p = StagePlan::of(stage, "stage");
    return std::tuple(p.stage, p.state_sharded, p.gradients_sharded, p.parameters_sharded);
  };
  CHECK(plan(0) == std::tuple(0, false, false, false));
  CHECK(plan(1) == std::tuple(1, true, false, false));
  CHECK(plan(2) == std::tuple(2, true, true, false));
  CHECK(plan(3) == std::tuple(3, true, true, true));
  for (int bad : {-1, 4, 1 << 30})
    CHECK_THROWS_WITH(StagePlan::of(bad, "trainer: zero_stage"),
                      "trainer: zero_stage " + std::to_string(bad) + " (0 to 3)");
}

TEST_CASE("the layout pads each slice to whole aligned shards") {
  const ShardLayout l({1000, 10, 0, 257}, 3);
  REQUIRE(l.slices() == 4);
  REQUIRE(l.shard(0) == 384);  // ceil(1000 / 3) = 334, up to 3 x 128
  REQUIRE(l.padded(0) == 1152);
  REQUIRE(l.shard(1) == 128);
  REQUIRE(l.shard(2) == 0);  // an empty slice has empty shards
  REQUIRE(l.offset(1) == 1152);
  REQUIRE(l.offset(3) == 1152 + 384);
  REQUIRE(l.shard_offset(3) == 384 + 128);
  REQUIRE(l.shard_size() == 384 + 128 + 0 + 128);
  REQUIRE(l.padded_size() == 3 * l.shard_size());
  REQUIRE(l.parameters() == 1267);
  for (std::size_t i = 0; i < l.slices(); ++i)
    REQUIRE(l.shard_offset(i) % ShardLayout::kAlignment == 0);
  REQUIRE_THROWS_WITH(ShardLayout({1}, 0), Catch::Contains("world size 0"));
  REQUIRE_THROWS_WITH(ShardLayout({std::numeric_limits<std::size_t>::max()}, 2),
                      Catch::Contains("too large"));
}

TEST_CASE("stages 1 and 2 are bit for bit the replicated optimizer, at 1 to 5 workers") {
  const int workers = GENERATE(1, 2, 3, 4, 5);
  const auto kind = GENERATE(OptimizerKind::sgd, OptimizerKind::adam, OptimizerKind::adamw);
  INFO(workers << " workers, rule " << static_cast<int>(kind));
  Team team(nubo_test::host_workers(workers));
  ShardedRun run;
  run.slices = {700, 5, 0, 300};  // an empty slice: every rank's shard of it has zero length
  run.options = adamw(0);
  run.options.optimizer = kind;
  run.options.max_grad_norm = 1.0f;  // exercises the norm's team-wide reduction too
  const auto replicated = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
  for (int stage : {1, 2}) {
    run.options.stage = stage;
    const auto sharded = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
    // The clipping coefficient comes from a norm summed in another order, so equality of the
    // update holds where the norm is below the limit; without clipping it is exact.
    REQUIRE(sharded.size() == replicated.size());
    for (std::size_t i = 0; i < sharded.size(); ++i)
      REQUIRE(sharded[i] == Approx(replicated[i]).epsilon(1e-5));
  }
  run.options.max_grad_norm = 0;
  run.options.stage = 0;
  const auto exact = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
  for (int stage : {1, 2}) {
    run.options.stage = stage;
    REQUIRE(on_team(team, [&](Worker& w) { return run_sharded(w, run); }) == exact);
  }
}

TEST_CASE("stage 3 gathers, prefetches and releases, and ends where stage 1 does") {
  const int workers = GENERATE(2, 3);
  Team team(nubo_test::sim_workers(workers));
  ShardedRun run;
  run.slices = {500, 64, 129};
  run.options = adamw(1);
  const auto stage1 = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
  run.options.stage = 3;
  const auto stage3 = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
  REQUIRE(stage3 == stage1);  // the same arithmetic on the same shards

  nubo_test::RankChecks checks;
  team.run([&](Worker& w) {
    const auto layout = ShardedOptimizer::layout_for(run.options, w.size(), run.slices);
    DeviceBuffer params = w.alloc(DType::f32, layout.padded_size());
    nubo_test::write_flat(w, layout, nubo_test::initial_parameters(layout.parameters()), params);
    ShardedOptimizer opt(w, params, run.options, run.slices);
    params = DeviceBuffer();  // stage 3 needs only its shard from now on
    DeviceBuffer s1 = opt.gather(1);
    RANK_EXPECT(checks, w, s1.size() == 64);
    std::vector<float> got(64);
    s1.read(got.data(), 64 * sizeof(float));
    const auto init = nubo_test::initial_parameters(layout.parameters());
    RANK_EXPECT(checks, w, got == std::vector<float>(init.begin() + 500, init.begin() + 564));
    opt.release(1);
    RANK_EXPECT(checks, w,
                refused([&] { opt.gather(3); }, "gather of slice 3: there are 3 slice(s)"));
  });
  checks.report();
}

TEST_CASE("each stage allocates the memory its formula says") {
  Team team(nubo_test::sim_workers(4));
  nubo_test::RankChecks checks;
  team.run([&](Worker& w) {
    for (int stage : {0, 1, 2, 3}) {
      ShardedOptions o = adamw(stage, DType::bf16);
      const std::size_t n = 1 << 20;
      const auto layout = ShardedOptimizer::layout_for(o, w.size(), {n});
      DeviceBuffer params = w.alloc(DType::bf16, layout.padded_size());
      w.fill(params, 0.5);
      const std::size_t before = w.bytes_in_use();
      ShardedOptimizer opt(w, params, o, {n});
      const double held = static_cast<double>(w.bytes_in_use() - before);
      const ShardedMemory f =
          sharded_memory(static_cast<double>(n), stage, o.optimizer, o.precision, w.size());
      // What the optimizer allocates is its state and, from stage 1, the gradient shard; stage 3
      // also its parameter shard. The formulas' other parts are the application's buffers.
      double expected = f.optimizer;
      if (stage >= 1) expected += 2.0 * n / 4;
      if (stage == 3) expected += f.parameters;
      RANK_EXPECT(checks, w, held == Approx(expected).epsilon(0.01));
    }
  });
  checks.report();
}

TEST_CASE("fp16 with loss scaling: an inf on one worker skips the step everywhere") {
  Team team(nubo_test::host_workers(2));
  nubo_test::RankChecks checks;
  team.run([&](Worker& w) {
    ShardedOptions o = adamw(1, DType::f16);
    const std::size_t n = 256;
    const auto layout = ShardedOptimizer::layout_for(o, w.size(), {n});
    DeviceBuffer params = w.alloc(DType::f16, layout.padded_size());
    w.fill(params, 0.25);
    ShardedOptimizer opt(w, params, o, {n});
    RANK_EXPECT(checks, w, opt.loss_scale() == 65536.0f);
    DeviceBuffer grads = w.alloc(DType::f16, layout.padded_size());
    w.fill(grads, 1.0);
    if (w.rank() == 1) {
      DeviceBuffer one = grads.slice(7, 1);
      w.fill(one, std::numeric_limits<double>::infinity());
    }
    const StepResult r = opt.step(grads);
    RANK_EXPECT(checks, w, !(r.applied));
    RANK_EXPECT(checks, w, opt.loss_scale() == 32768.0f);
    RANK_EXPECT(checks, w, opt.steps() == 0);
    std::vector<half> p(n);
    params.read(p.data(), n * sizeof(half));
    for (half x : p)
      RANK_EXPECT(checks, w, static_cast<float>(x) == 0.25f);  // untouched on both ranks

    // A clean step applies, with the gradients unscaled: 32768 / 32768 = 1 per element.
    w.fill(grads, 32768.0);
    const StepResult ok = opt.step(grads);
    RANK_EXPECT(checks, w, ok.applied);
    RANK_EXPECT(checks, w, ok.grad_norm == Approx(16.0));  // both ranks' shards: 256 ones in all
    RANK_EXPECT(checks, w, opt.steps() == 1);
  });
  checks.report();
}

TEST_CASE("2000 clean steps double the loss scale") {
  Team team(nubo_test::host_workers(2));
  nubo_test::RankChecks checks;
  team.run([&](Worker& w) {
    ShardedOptions o = adamw(2, DType::f16);
    o.optimizer = OptimizerKind::sgd;
    o.lr = 0;
    const auto layout = ShardedOptimizer::layout_for(o, w.size(), {8});
    DeviceBuffer params = w.alloc(DType::f16, layout.padded_size());
    w.fill(params, 0.0);
    ShardedOptimizer opt(w, params, o, {8});
    DeviceBuffer grads = w.alloc(DType::f16, layout.padded_size());
    for (int t = 0; t < 1999; ++t) {
      w.fill(grads, 1.0);
      RANK_EXPECT(checks, w, opt.step(grads).applied);
    }
    RANK_EXPECT(checks, w, opt.loss_scale() == 65536.0f);
    w.fill(grads, 1.0);
    RANK_EXPECT(checks, w, opt.step(grads).loss_scale == 131072.0);
    opt.set_learning_rate(0.5f);  // a schedule's
    RANK_EXPECT(checks, w, opt.learning_rate() == 0.5f);
    RANK_EXPECT(checks, w, refused([&] { opt.set_learning_rate(-1.0f); }, "learning rate -1"));
  });
  checks.report();
}

TEST_CASE("bf16 and f16 training follows f32 closely") {
  Team team(nubo_test::host_workers(2));
  ShardedRun run;
  run.options = adamw(1);
  run.steps = 10;
  const auto f32 = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
  for (DType t : {DType::bf16, DType::f16}) {
    run.options.precision = t;
    const auto low = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
    // Ten Adam steps of lr 0.01 move each weight by up to 0.1. Adam's step is about
    // lr * sign(g) early on, so a gradient near 0 that rounds differently moves its weight by
    // up to a few lr; on average the fp32 master keeps the runs within a fraction of one.
    double sum = 0;
    for (std::size_t i = 0; i < low.size(); ++i) {
      REQUIRE(low[i] == Approx(f32[i]).margin(0.05));
      sum += std::abs(low[i] - f32[i]);
    }
    REQUIRE(sum / static_cast<double>(low.size()) < 0.002);
  }
}

TEST_CASE("gradients compressed to bf16 carry half the bytes and stay close") {
  Team team(nubo_test::host_workers(2));
  ShardedRun run;
  run.options = adamw(0);  // the all-reduce of DDP's compression hooks
  run.steps = 6;
  std::uint64_t plain_bytes = 0, packed_bytes = 0;
  const auto count = [&](std::uint64_t& into) {
    return [&into, &run](Worker& w) {
      const auto layout = ShardedOptimizer::layout_for(run.options, w.size(), run.slices);
      DeviceBuffer params = w.alloc(DType::f32, layout.padded_size());
      w.fill(params, 0.0);
      ShardedOptimizer opt(w, params, run.options, run.slices);
      DeviceBuffer grads = w.alloc(DType::f32, layout.padded_size());
      for (int t = 0; t < run.steps; ++t) {
        w.fill(grads, 0.125);
        opt.step(grads);
      }
      if (w.rank() == 0) into = opt.bytes_communicated();
      return std::vector<float>{};
    };
  };
  on_team(team, count(plain_bytes));
  const auto plain = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
  for (bool feedback : {false, true}) {
    run.options.wire = DType::bf16;
    run.options.error_feedback = feedback;
    on_team(team, count(packed_bytes));
    REQUIRE(static_cast<double>(packed_bytes) <= 0.51 * static_cast<double>(plain_bytes));
    const auto packed = on_team(team, [&](Worker& w) { return run_sharded(w, run); });
    for (std::size_t i = 0; i < packed.size(); ++i)
      REQUIRE(packed[i] == Approx(plain[i]).margin(0.01));
  }
}

TEST_CASE("error feedback carries the rounding into the next step") {
  Team team(nubo_test::host_workers(1));
  team.run([&](Worker& w) {
    ShardedOptions o = adamw(0);
    o.optimizer = OptimizerKind::sgd;
    o.momentum = 0;
    o.lr = 1;
    o.weight_decay = 0;
    o.wire = DType::bf16;
    o.error_feedback = true;
    const auto layout = ShardedOptimizer::layout_for(o, 1, {1});
    DeviceBuffer params = w.alloc(DType::f32, layout.padded_size());
    w.fill(params, 0.0);
    ShardedOptimizer opt(w, params, o, {1});
    DeviceBuffer grads = w.alloc(DType::f32, layout.padded_size());
    // 1 + 2^-10 is not a bf16 (8 bits of mantissa): alone it rounds to 1 every step, losing
    // 2^-10 each time; with the residual fed back the sum over 8 steps is exact.
    float p = 0;
    for (int t = 0; t < 8; ++t) {
      w.fill(grads, 1.0 + 1.0 / 1024);
      opt.step(grads);
    }
    params.read(&p, sizeof p);
    REQUIRE(p == Approx(-8.0 * (1.0 + 1.0 / 1024)).margin(1.0 / 256));  // a residual left
    REQUIRE(p != -8.0f);
  });
}

TEST_CASE("a checkpoint of 4 workers resumes on 2 and on 1 where the uninterrupted run ends") {
  nubo::test::TempDir dir;
  const std::string path = dir.path + "/opt.nubo";
  ShardedRun run;
  run.options = adamw(1, DType::bf16);
  run.slices = {1000, 33};
  run.same_on_every_rank = true;
  run.steps = 6;
  Team four(nubo_test::sim_workers(4));
  const auto whole = on_team(four, [&](Worker& w) { return run_sharded(w, run); });
  run.steps = 3;
  on_team(four, [&](Worker& w) { return run_sharded(w, run, "", path); });
  for (int workers : {2, 1}) {
    for (int stage : {0, 2, 3}) {
      INFO(workers << " workers, stage " << stage);
      Team team(nubo_test::sim_workers(workers));
      ShardedRun rest = run;
      rest.options.stage = stage;
      rest.first_step = 4;
      const auto resumed = on_team(team, [&](Worker& w) { return run_sharded(w, rest, path); });
      REQUIRE(resumed == whole);
    }
  }
}

TEST_CASE("a damaged or foreign optimizer state is refused, naming the problem") {
  nubo::test::TempDir dir;
  const std::string path = dir.path + "/opt.nubo";
  ShardedRun run;
  run.options = adamw(1);
  run.steps = 1;
  Team team(nubo_test::host_workers(2));
  on_team(team, [&](Worker& w) { return run_sharded(w, run, "", path); });
  const auto load_with = [&](ShardedRun r) {
    std::string what;
    std::mutex mutex;
    try {
      on_team(team, [&](Worker& w) { return run_sharded(w, r, path); });
    } catch (const Error& e) {
      what = e.what();
    }
    return what;
  };
  ShardedRun other = run;
  other.slices = {999};
  REQUIRE_THAT(load_with(other), Catch::Contains("slices [1000] (1000 parameters)") &&
                                     Catch::Contains("[999] (999 parameters)"));
  other = run;
  other.options.optimizer = OptimizerKind::sgd;
  REQUIRE_THAT(load_with(other),
               Catch::Contains("the state is of adamw but this optimizer runs sgd"));
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  }
  REQUIRE_THAT(load_with(run), Catch::Contains("checksum does not match"));
  std::filesystem::resize_file(path, 100);
  REQUIRE_THAT(load_with(run), Catch::Contains("not a whole optimizer state"));
}

// A state file rewritten as a crafted one would be: another header, or other values, under a
// checksum that matches. The checksum says the file is whole; the values must still be a state.
namespace {
void rewrite_state(const std::string& path, const std::string& from, const std::string& to,
                   std::size_t value_at = 0, float value = 0, bool set_value = false) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::uint64_t hl = 0;
  std::memcpy(&hl, bytes.data() + 8, sizeof hl);
  std::string header = bytes.substr(16, hl);
  std::string body = bytes.substr(16 + hl, bytes.size() - 16 - hl - 4);
  if (!from.empty()) {
    const auto at = header.find(from);
    REQUIRE(at != std::string::npos);
    header.replace(at, from.size(), to);
  }
  if (set_value) std::memcpy(body.data() + value_at * sizeof(float), &value, sizeof value);
  hl = header.size();
  std::string out = bytes.substr(0, 8);
  out.append(reinterpret_cast<const char*>(&hl), sizeof hl);
  out += header + body;
  const std::uint32_t crc = nubo::crc32c::extend(0, out.data(), out.size());
  out.append(reinterpret_cast<const char*>(&crc), sizeof crc);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << out;
}
}  // namespace

TEST_CASE("an optimizer state crafted under a valid checksum is refused, never taken") {
  nubo::test::TempDir dir;
  const std::string path = dir.path + "/opt.nubo", saved = dir.path + "/saved.nubo";
  ShardedRun run;
  run.options = adamw(1);
  run.steps = 1;
  Team team(nubo_test::host_workers(2));
  on_team(team, [&](Worker& w) { return run_sharded(w, run, "", saved); });
  const auto load_crafted = [&](const std::string& from, const std::string& to,
                                std::size_t value_at = 0, float value = 0, bool set = false) {
    std::filesystem::copy_file(saved, path, std::filesystem::copy_options::overwrite_existing);
    rewrite_state(path, from, to, value_at, value, set);
    std::string what = "no error";
    try {
      on_team(team, [&](Worker& w) { return run_sharded(w, run, path); });
    } catch (const Error& e) {
      what = e.what();
    }
    return what;
  };
  CHECK_THAT(load_crafted("", ""), Catch::Equals("no error"));  // the rewrite itself is faithful
  CHECK_THAT(load_crafted("\"step\":1", "\"step\":-1"), Catch::Contains("step: -1 is outside"));
  CHECK_THAT(load_crafted("\"step\":1", "\"step\":1e30"),
             Catch::Contains("step: 1e+30 is outside"));
  CHECK_THAT(load_crafted("[1000]", "[1000.5]"), Catch::Contains("not a whole number"));
  CHECK_THAT(load_crafted("\"step\":1", "\"step\":1,\"step\":2"), Catch::Contains("appears twice"));
  CHECK_THAT(load_crafted("\"clean_steps\":0", "\"clean_steps\":-3"),
             Catch::Contains("clean_steps: -3 is outside"));
  // Values: master, then m, then v, 1000 each.
  CHECK_THAT(load_crafted("", "", 5, std::numeric_limits<float>::quiet_NaN(), true),
             Catch::Contains("master[5] is nan"));
  CHECK_THAT(load_crafted("", "", 2000 + 7, -1.0f, true), Catch::Contains("v[7] is -1"));
  // A FIFO is refused before anything waits on it.
  std::filesystem::remove(path);
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  std::string what;
  try {
    on_team(team, [&](Worker& w) { return run_sharded(w, run, path); });
  } catch (const Error& e) {
    what = e.what();
  }
  CHECK_THAT(what, Catch::Contains("a FIFO, not a regular file"));
}

TEST_CASE("the sharded optimizer refuses bad input, naming it") {
  Team team(nubo_test::host_workers(2));
  SECTION("parameter buffers of different lengths across workers name both ranks") {
    REQUIRE_THROWS_WITH(team.run([&](Worker& w) {
      ShardedOptions o = adamw(1);
      const std::size_t n = w.rank() == 0 ? 1000 : 2000;
      const auto layout = ShardedOptimizer::layout_for(o, w.size(), {n});
      DeviceBuffer params = w.alloc(DType::f32, layout.padded_size());
      w.fill(params, 0.0);
      ShardedOptimizer opt(w, params, o, {n});
    }),
                        Catch::Contains("rank 0") && Catch::Contains("rank 1"));
  }
  SECTION("a gradient buffer smaller than the parameters, an unsupported type, a bad slice") {
    nubo_test::RankChecks checks;
    team.run([&](Worker& w) {
      ShardedOptions o = adamw(1);
      const auto layout = ShardedOptimizer::layout_for(o, w.size(), {100});
      DeviceBuffer params = w.alloc(DType::f32, layout.padded_size());
      w.fill(params, 0.0);
      ShardedOptimizer opt(w, params, o, {100});
      DeviceBuffer small = w.alloc(DType::f32, 100);
      RANK_EXPECT(checks, w,
                  refused([&] { opt.step(small); },
                          "the gradients hold 100 elements of f32 but the parameters 256"));
      DeviceBuffer g = w.alloc(DType::f32, layout.padded_size());
      RANK_EXPECT(checks, w, refused([&] { opt.reduce(1, g); }, "reduce of slice 1: there are 1"));
      RANK_EXPECT(checks, w, refused([&] { opt.gather(0); }, "only stage 3 gathers"));
      RANK_EXPECT(checks, w, refused([&] { opt.step(); }, "slice 0 was not reduced"));
      ShardedOptions i32 = o;
      i32.precision = DType::i32;
      RANK_EXPECT(checks, w,
                  refused([&] { ShardedOptimizer(w, params, i32, {100}); },
                          "precision i32 is not supported"));
      ShardedOptions packed = adamw(1, DType::bf16);
      packed.wire = DType::f16;
      RANK_EXPECT(
          checks, w,
          refused([&] { ShardedOptimizer(w, params, packed, {100}); }, "needs f32 gradients"));
      DeviceBuffer wrong = w.alloc(DType::f32, 100);
      RANK_EXPECT(checks, w,
                  refused([&] { ShardedOptimizer(w, wrong, o, {100}); },
                          "params hold 100 elements but the layout needs 256"));
      ShardedOptions stage5 = o;
      stage5.stage = 5;
      RANK_EXPECT(checks, w,
                  refused([&] { ShardedOptimizer(w, params, stage5, {100}); }, "stage 5 (0 to 3)"));
    });
    checks.report();
  }
}

TEST_CASE("the memory formulas follow ZeRO's per stage") {
  // ZeRO's worked example: 7.5B parameters, 64 GPUs, mixed precision Adam (K = 12).
  const double psi = 7.5e9;
  const auto gb = [](const ShardedMemory& m) { return m.total() / 1e9; };
  REQUIRE(gb(sharded_memory(psi, 0, OptimizerKind::adam, DType::f16, 64)) == Approx(120));
  // Stage 1 adds the reduced gradient shard (2 bytes / 64) to ZeRO's 31.4 GB.
  REQUIRE(gb(sharded_memory(psi, 1, OptimizerKind::adam, DType::f16, 64)) ==
          Approx(31.64).epsilon(0.01));
  REQUIRE(gb(sharded_memory(psi, 2, OptimizerKind::adam, DType::f16, 64)) ==
          Approx(16.6).epsilon(0.01));
  REQUIRE(gb(sharded_memory(psi, 3, OptimizerKind::adam, DType::f16, 64)) == Approx(1.875));  // 1.9
  REQUIRE_THROWS_WITH(sharded_memory(psi, 4, OptimizerKind::adam, DType::f16, 64),
                      Catch::Contains("stage 4"));
}
