// Workloads described by their model: FLOPs, GPU memory per worker under ZeRO, and the plans
// that follow (no GPU too small, and every estimate saying what it could not model).
#include <catch2/catch.hpp>

#include "cost/memory_model.hpp"
#include "cost/model.hpp"
#include "cost_helpers.hpp"
#include "nubo/cost.hpp"
#include "nubo/optimizer.hpp"

using namespace nubo;
using namespace nubo::cost;

namespace {

Workload seven_b() {
  Workload w;
  w.parameters = 7e9;
  w.tokens = 2e9;
  w.dtype = DType::bf16;
  return w;
}

bool any_note(const Estimate& e, const std::string& text) {
  for (const auto& n : e.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("model states per GPU match the ZeRO paper's worked example") {
  // Rajbhandari et al. 2020, figure 1: 7.5B parameters, 64 GPUs, mixed precision with Adam.
  Workload w;
  w.parameters = 7.5e9;
  w.dtype = DType::f16;
  const auto m = cost::detail::memory_model(w);
  CHECK(cost::detail::model_states(m, 0, 64) / 1e9 == Approx(120));
  CHECK(cost::detail::model_states(m, 1, 64) / 1e9 == Approx(31.4).epsilon(0.01));
  CHECK(cost::detail::model_states(m, 2, 64) / 1e9 == Approx(16.6).epsilon(0.01));
  CHECK(cost::detail::model_states(m, 3, 64) / 1e9 == Approx(1.9).epsilon(0.02));
  // SGD keeps one state, not two; f32 training keeps no separate master copy.
  w.optimizer = Optimizer::sgd;
  CHECK(cost::detail::model_states(cost::detail::memory_model(w), 0, 1) / 7.5e9 == Approx(12));
  w.dtype = DType::f32;
  CHECK(cost::detail::model_states(cost::detail::memory_model(w), 0, 1) / 7.5e9 == Approx(12));
}

TEST_CASE("a workload by its model: 6 N D FLOPs and the gradient bytes of a step") {
  auto w = seven_b();
  CHECK(w.training_flops() == Approx(6 * 7e9 * 2e9));
  w.tokens = 0;
  w.samples = 1e6;
  w.sequence_length = 2048;
  w.epochs = 2;
  CHECK(w.training_flops() == Approx(6 * 7e9 * 1e6 * 2048 * 2));
  const auto m = cost::detail::compile(seven_b());
  CHECK(m.allreduce_bytes == Approx(14e9));  // bf16 gradients
  CHECK_FALSE(m.communication_modelled);     // no batch: no step count
  auto batched = seven_b();
  batched.global_batch = 512;
  batched.sequence_length = 4096;
  CHECK(cost::detail::compile(batched).steps == Approx(2e9 / (512 * 4096.0)));
  CHECK(cost::detail::compile(batched).communication_modelled);
}

TEST_CASE("a 7B model: no 24 GB GPU without sharding, and the way out is named") {
  auto c = cost_test::fixed_catalog();
  PlanRequest r;
  r.limit = 0;
  // Plain data parallelism keeps 112 GB of model states on every GPU: nothing here holds it.
  auto pinned = seven_b();
  pinned.sharding = 0;
  auto plain = plan(c, pinned, r);
  CHECK(plain.ranked.empty());
  bool named = false;
  for (const auto& x : plain.exclusions())
    if (x.reason.find("A10G has") != std::string::npos)
      named = x.reason.find("112.0 GB of model states at ZeRO-0") != std::string::npos &&
              x.reason.find("with ZeRO-3 (--zero 3) across") != std::string::npos &&
              x.reason.find("or take a GPU that holds it") != std::string::npos;
  CHECK(named);
  // Letting nubo pick the stage (the default): every option fits, partitioned, and says how.
  auto sharded = plan(c, seven_b(), r);
  REQUIRE_FALSE(sharded.ranked.empty());
  for (const auto& e : sharded.ranked) {
    INFO(e.label());
    CHECK(e.memory_needed_bytes <= e.memory_per_gpu_bytes);
    CHECK(e.sharding >= 1);
    CHECK(e.gpus_per_node * e.nodes > 1);
    CHECK(any_note(e, "fits with ZeRO-"));
  }
}

TEST_CASE("what is not modelled is said, and never ranks a multi-node option") {
  auto c = cost_test::box_catalog();
  PlanRequest r;
  r.max_nodes = 4;
  r.limit = 0;
  // FLOPs alone: no memory, no communication.
  auto p = plan(c, cost_test::flops_workload(), r);
  for (const auto& e : p.ranked) {
    CHECK(e.nodes == 1);
    CHECK(any_note(e, "GPU memory not modelled: give --params (or --gpu-memory)"));
    CHECK(any_note(e, "communication between its 8 GPUs not modelled"));
  }
  bool excluded = false;
  for (const auto& x : p.exclusions())
    excluded = excluded ||
               (x.subject.find("x2-4") != std::string::npos &&
                x.reason.find("communication between them is not modelled: give the model's size "
                              "(--params or --params-bytes) and the global batch (--batch)") !=
                    std::string::npos);
  CHECK(excluded);
  // The model without a batch: only the batch is asked for (the size is there).
  auto w = seven_b();
  std::string reasons;
  const auto unbatched = plan(c, w, r);
  for (const auto& x : unbatched.exclusions()) reasons += x.reason + "\n";
  CHECK_THAT(reasons, Catch::Contains("not modelled: give the global batch (--batch") &&
                          !Catch::Contains("--params"));
  // With the model and a batch, the nodes are planned.
  w.global_batch = 256;
  w.sequence_length = 4096;
  auto q = plan(c, w, r);
  bool multi = false;
  for (const auto& e : q.ranked) multi = multi || e.nodes > 1;
  CHECK(multi);
  for (const auto& e : q.ranked) CHECK_FALSE(any_note(e, "not modelled"));
}

TEST_CASE("a profile that records its model rescales the model states to another GPU count") {
  // A run of 1e9 bf16 parameters with Adam at ZeRO 2 on 4 GPUs, which measured 9 GB a GPU.
  Profile p;
  p.backend = "cuda";
  p.device_model = "A100-SXM4-80GB";
  p.global_batch = 64;
  p.compute_time_s = 0.5;
  p.samples_per_s = 128;
  p.dataset_samples = 1e6;
  p.parameters = 1e9;
  p.zero_stage = 2;
  p.optimizer = "adam";
  p.dtype = DType::bf16;
  p.devices = 4;
  p.memory_per_device_bytes = 9e9;
  const auto m = cost::detail::measured_memory(p);
  const double states4 = sharded_memory(1e9, 2, OptimizerKind::adamw, DType::bf16, 4).total();
  REQUIRE(m.activations == Approx(9e9 - states4));
  // On 8 GPUs the states halve (but for the whole parameters); the rest stays as measured.
  const double on8 = cost::detail::memory_per_gpu(m, 8, 80e9);
  REQUIRE(on8 == Approx(sharded_memory(1e9, 2, OptimizerKind::adamw, DType::bf16, 8).total() +
                        (9e9 - states4)));
  REQUIRE(on8 < 9e9);
  // The profile's JSON carries them.
  const Profile back = Profile::parse(p.to_json(), "test");
  REQUIRE(back.parameters == 1e9);
  REQUIRE(back.zero_stage == 2);
  REQUIRE(back.optimizer == "adam");
  p.optimizer = "lamb";
  REQUIRE_THROWS_WITH(Profile::parse(p.to_json(), "test"), Catch::Contains("model.optimizer"));
}
