#include <catch2/catch.hpp>

#include "nubo/cost.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::cost;

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
  fails([] { parse_dtype("int8"); }, "fp32, tf32, fp16 or bf16");
}

TEST_CASE("money prints for people, small amounts included") {
  CHECK(format_money(1234.5) == "$1,234.50");
  CHECK(format_money(0.526) == "$0.53");
  CHECK(format_money(1234567.891) == "$1,234,567.89");
  CHECK(format_money(0.0031) == "$0.0031");
  CHECK(format_money(0.000012345) == "$0.000012");
  CHECK(format_money(-0.004) == "-$0.004");
  CHECK(format_money(0) == "$0.00");
}
