// Serving: decode rates worked out by hand from memory bandwidth, the batch that fits and meets
// the latency, and the instances a target rate needs.
#include <catch2/catch.hpp>
#include <cmath>

#include "nubo/cost.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::cost;

namespace {

// One A100 80GB (85,899,345,920 bytes, 2039 GB/s) at $4/h, and one T4 at $0.50/h.
Catalog small_catalog() {
  auto c = Catalog::empty();
  c.load_text(
      "provider,instance,region,gpu_model,gpus,on_demand,spot\n"
      "aws,one-a100,r1,A100-SXM4-80GB,1,4,1\n"
      "aws,one-t4,r1,T4,1,0.5,\n",
      "small.csv");
  return c;
}

InferenceWorkload one_b() {
  InferenceWorkload w;
  w.parameters = 1e9;  // 2e9 bytes of bf16 weights
  w.kv_bytes_per_token = 1e5;
  w.context_tokens = 1000;  // 1e8 bytes of KV cache per sequence
  return w;
}

}  // namespace

TEST_CASE("a decode rate worked out by hand: batch by memory, then by latency") {
  PlanRequest r;
  r.gpu = "A100";
  auto w = one_b();
  auto p = plan_serving(small_catalog(), w, r);
  REQUIRE(p.ranked.size() == 1);
  const auto& o = p.ranked[0];
  const double memory = 85899345920.0 * 0.9, bandwidth = 2039e9 * 0.8;
  const double batch = std::floor((memory - 2e9) / 1e8);  // 753 sequences fit
  CHECK(o.batch == batch);
  CHECK(o.token_latency_s == Approx((2e9 + batch * 1e8) / bandwidth));  // 47.4 ms: memory-bound
  CHECK(o.tokens_per_s == Approx(batch / o.token_latency_s));
  CHECK(o.instances == 1);  // no target: one instance's capacity
  // 20 ms per token: (2e9 + b x 1e8) / 1631.2e9 <= 0.02 gives b = 306.
  w.latency_s = 0.02;
  auto fast = plan_serving(small_catalog(), w, r).ranked.at(0);
  CHECK(fast.batch == 306);
  CHECK(fast.token_latency_s <= 0.02);
  CHECK((2e9 + 307 * 1e8) / bandwidth > 0.02);
  // A target of 100,000 tokens/s needs ceil(100000 / 15311) = 7 of them.
  w.tokens_per_s = 100000;
  auto many = plan_serving(small_catalog(), w, r).ranked.at(0);
  CHECK(many.instances == static_cast<int>(std::ceil(100000 / fast.tokens_per_s)));
  CHECK(many.hourly == Approx(4.0 * many.instances));
  CHECK(many.dollars_per_million_tokens == Approx(many.hourly / (100000 * 3600.0) * 1e6));
}

TEST_CASE("a single T4 is enough to serve a small model in f16") {
  InferenceWorkload w;
  w.parameters = 1e9;
  w.dtype = DType::f16;
  w.tokens_per_s = 100;
  w.latency_s = 0.1;
  PlanRequest r;
  auto p = plan_serving(small_catalog(), w, r);
  REQUIRE_FALSE(p.ranked.empty());
  CHECK(p.ranked[0].instance == "one-t4");
  CHECK(p.ranked[0].instances == 1);
  // In bf16 the T4 cannot: it has no bf16, and says so.
  w.dtype = DType::bf16;
  auto bf = plan_serving(small_catalog(), w, r);
  bool said = false;
  for (const auto& x : bf.exclusions)
    said = said || x.reason.find("T4 has no bf16 support") != std::string::npos;
  CHECK(said);
}

TEST_CASE("what cannot serve is explained, and bad workloads are refused") {
  InferenceWorkload w;
  w.parameters = 70e9;  // 140 GB of weights
  PlanRequest r;
  auto p = plan_serving(small_catalog(), w, r);
  CHECK(p.ranked.empty());
  bool weights = false;
  for (const auto& x : p.exclusions)
    weights = weights || x.reason.find("do not fit 1x A100-SXM4-80GB") != std::string::npos;
  CHECK(weights);
  InferenceWorkload none;
  CHECK_THROWS_AS(plan_serving(small_catalog(), none, r), Error);
  auto bad = one_b();
  bad.dtype = DType::i32;
  CHECK_THROWS_WITH(plan_serving(small_catalog(), bad, r), Catch::Contains("dtype"));
  bad = one_b();
  bad.latency_s = -1;
  CHECK_THROWS_WITH(plan_serving(small_catalog(), bad, r), Catch::Contains("latency_s"));
}
