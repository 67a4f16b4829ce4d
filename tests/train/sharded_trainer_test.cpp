// The trainer over the sharded optimizer: ZeRO stages 1 and 2 are bit for bit the replicated
// run, stage 3 within rounding; bf16 and f16 (with loss scaling) train; gradient accumulation
// is the whole batch's step; compressed gradients stay close; a sharded run's checkpoint
// resumes on another world size and stage.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "nubo/error.hpp"

using namespace train_test;

namespace {

std::vector<float> run(int workers, const nubo::TrainerOptions& o, int steps,
                       double* last_loss = nullptr) {
  auto data = synthetic(512);
  auto team = cpu_team(workers);
  nubo::DataParallelTrainer t(team, o, data);
  double loss = 0;
  for (int i = 0; i < steps; ++i) loss = t.step().loss;
  if (last_loss) *last_loss = loss;
  return t.parameters();
}

nubo::TrainerOptions adam_options() {
  auto o = small_options();
  o.optimizer = nubo::Optimizer::adam;
  o.lr = 0.01f;
  o.bucket_bytes = 1024;  // several buckets: several slices
  return o;
}

}  // namespace

TEST_CASE("ZeRO stages 1 and 2 train bit for bit as the replicated trainer, 3 within rounding",
          "[train][sharded]") {
  for (auto opt : {nubo::Optimizer::sgd, nubo::Optimizer::adam}) {
    auto o = adam_options();
    o.optimizer = opt;
    const auto replicated = run(3, o, 12);
    for (int stage : {1, 2, 3}) {
      CAPTURE(stage, static_cast<int>(opt));
      o.zero_stage = stage;
      const auto sharded = run(3, o, 12);
      REQUIRE(sharded.size() == replicated.size());
      if (stage < 3)
        REQUIRE(sharded == replicated);
      else
        REQUIRE(max_abs_diff(sharded, replicated) < 1e-6);
    }
  }
}

TEST_CASE("ZeRO 3 with a batch smaller than the team: the rank without rows gathers too",
          "[train][sharded]") {
  // 130 rows in batches of 64: the third step has 2 rows for 3 workers.
  auto data = synthetic(130);
  std::vector<std::vector<float>> results;
  for (int stage : {0, 3}) {
    auto o = adam_options();
    o.zero_stage = stage;
    auto team = cpu_team(3);
    nubo::DataParallelTrainer t(team, o, data);
    for (int i = 0; i < 5; ++i) t.step();
    results.push_back(t.parameters());
    REQUIRE(t.evaluate(*data).samples == 130);
  }
  REQUIRE(max_abs_diff(results[0], results[1]) < 1e-6);
}

TEST_CASE("bf16 and f16 training lowers the loss like f32", "[train][sharded]") {
  auto o = adam_options();
  double f32_loss = 0;
  run(2, o, 40, &f32_loss);
  for (auto p : {nubo::DType::bf16, nubo::DType::f16}) {
    for (int stage : {0, 1, 3}) {
      CAPTURE(static_cast<int>(p), stage);
      o.precision = p;
      o.zero_stage = stage;
      double loss = 0;
      const auto params = run(2, o, 40, &loss);
      REQUIRE(std::isfinite(loss));
      REQUIRE(loss == Approx(f32_loss).margin(0.05));
    }
  }
}

TEST_CASE("gradient accumulation takes the whole batch's step", "[train][sharded]") {
  auto o = adam_options();
  o.optimizer = nubo::Optimizer::sgd;
  o.lr = 0.1f;
  const auto whole = run(2, o, 10);
  for (int micro : {2, 4}) {
    o.accumulate = micro;
    CAPTURE(micro);
    // The same gradients summed in another order: equal within f32 rounding.
    REQUIRE(max_abs_diff(run(2, o, 10), whole) < 1e-5);
  }
}

TEST_CASE("gradients compressed to bf16 train close to f32 ones", "[train][sharded]") {
  auto o = adam_options();
  double plain = 0;
  run(2, o, 30, &plain);
  for (bool feedback : {false, true}) {
    o.grad_compression = nubo::DType::bf16;
    o.error_feedback = feedback;
    double packed = 0;
    run(2, o, 30, &packed);
    REQUIRE(packed == Approx(plain).margin(0.02));
  }
}

TEST_CASE("a checkpoint of a sharded run resumes on another world size and stage",
          "[train][sharded]") {
  const auto dir = temp_dir("sharded");
  auto o = adam_options();
  o.zero_stage = 1;
  o.precision = nubo::DType::bf16;
  auto data = synthetic(512);
  std::vector<float> whole;
  {
    auto team = cpu_team(4);
    nubo::DataParallelTrainer t(team, o, data);
    for (int i = 0; i < 10; ++i) t.step();
    whole = t.parameters();
  }
  const std::string path = (dir / "ckpt.nubo").string();
  {
    auto team = cpu_team(4);
    nubo::DataParallelTrainer t(team, o, data);
    for (int i = 0; i < 5; ++i) t.step();
    t.save(path);
  }
  for (int workers : {2, 1}) {
    for (int stage : {0, 2, 3}) {
      CAPTURE(workers, stage);
      auto team = cpu_team(workers);
      auto p = o;
      p.zero_stage = stage;
      nubo::DataParallelTrainer t(team, p, data);
      t.load(path);
      REQUIRE(t.steps_done() == 5);
      for (int i = 0; i < 5; ++i) t.step();
      // Other world sizes sum the gradients in another order: within bf16's rounding.
      REQUIRE(max_abs_diff(t.parameters(), whole) < 2e-2);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("sharding and precision options that make no sense are refused", "[train][sharded]") {
  auto data = synthetic(64);
  auto team = cpu_team(1);
  const auto refused = [&](nubo::TrainerOptions o, const std::string& what) {
    REQUIRE_THROWS_WITH(nubo::DataParallelTrainer(team, o, data), Catch::Contains(what));
  };
  auto o = small_options();
  o.zero_stage = 4;
  refused(o, "zero_stage 4 (0 to 3)");
  o = small_options();
  o.precision = nubo::DType::i32;
  refused(o, "precision i32");
  o = small_options();
  o.precision = nubo::DType::bf16;
  o.grad_compression = nubo::DType::bf16;
  refused(o, "already travel in 16 bits");
  o = small_options();
  o.error_feedback = true;
  refused(o, "error_feedback needs gradient compression");
  o = small_options();
  o.accumulate = 0;
  refused(o, "accumulate 0");
}
