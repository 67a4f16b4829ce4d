#include <catch2/catch.hpp>
#include <limits>

#include "cost_helpers.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::cost;
using namespace cost_test;

TEST_CASE("malformed pricing and dtypes say what was wrong") {
  auto fails = [](auto fn, const char* needle) {
    try {
      fn();
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains(needle));
    }
  };
  fails([] { parse_pricing("cheap"); }, "on-demand, spot, reserved-1y or reserved-3y");
  fails([] { parse_dtype("int8"); }, "use f32, tf32, f16, bf16, i32 or i64");
  fails([] { parse_dtype(""); }, "unknown dtype ''");
}

TEST_CASE("one dtype serves buffers and the cost model, in every spelling users know") {
  CHECK(parse_dtype("f32") == DType::f32);
  CHECK(parse_dtype("FP32") == DType::f32);
  CHECK(parse_dtype("float32") == DType::f32);
  CHECK(parse_dtype("tf32") == DType::tf32);
  CHECK(parse_dtype("fp16") == DType::f16);
  CHECK(parse_dtype("half") == DType::f16);
  CHECK(parse_dtype("bfloat16") == DType::bf16);
  CHECK(parse_dtype("int32") == DType::i32);
  CHECK(parse_dtype("i64") == DType::i64);
  for (auto d : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64, DType::tf32})
    CHECK(parse_dtype(dtype_name(d)) == d);
  CHECK(dtype_size(DType::tf32) == 0);  // a compute precision: no buffer holds it
}

TEST_CASE("the cost model refuses integer work, which has no peak rate to price") {
  auto w = flops_workload();
  w.dtype = DType::i32;
  try {
    (void)plan(box_catalog(), w, PlanRequest{});
    FAIL("an i32 workload was priced");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("dtype i32 has no peak rate"));
  }
}

TEST_CASE("money prints for people, small amounts included") {
  CHECK(format_money(1234.5) == "$1,234.50");
  CHECK(format_money(0.526) == "$0.53");
  CHECK(format_money(1234567.891) == "$1,234,567.89");
  CHECK(format_money(0.0031) == "$0.0031");
  CHECK(format_money(0.000012345) == "$0.000012");
  // Below the tenth decimal there is no digit to show: zero, never a bare "$".
  CHECK(format_money(1e-12) == "$0.00");
  CHECK(format_money(-0.004) == "-$0.004");
  CHECK(format_money(0) == "$0.00");
  // Any double: a sum from a rate of 1e-60 requests per second once overran the buffer.
  CHECK(format_money(1e61) == "$1e+61");
  CHECK(format_money(-1e300) == "-$1e+300");
  for (double v :
       {std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(),
        std::numeric_limits<double>::denorm_min(), 1e15, 999999999999999.0, -0.0,
        std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    const auto money = format_money(v);
    CHECK(money.size() < 32);
    CHECK(money.find('$') != std::string::npos);
    CHECK(format_duration(v).size() < 32);
  }
}
