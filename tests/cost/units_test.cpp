#include <catch2/catch.hpp>

#include "nubo/cost.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::cost;

TEST_CASE("durations and byte counts parse with their units") {
  CHECK(parse_duration("90", "t") == 90);
  CHECK(parse_duration("15m", "t") == 900);
  CHECK(parse_duration("24h", "t") == 86400);
  CHECK(parse_duration("1.5d", "t") == 129600);
  CHECK(parse_duration("1w", "t") == 604800);
  CHECK(parse_bytes("20G", "b") == 20e9);
  CHECK(parse_bytes("20GB", "b") == 20e9);
  CHECK(parse_bytes("1.5T", "b") == 1.5e12);
  CHECK(parse_bytes("2GiB", "b") == 2.0 * (1ull << 30));
  CHECK(parse_bytes("512", "b") == 512);
}

TEST_CASE("malformed durations and sizes say what was wrong") {
  auto fails = [](auto fn, const char* needle) {
    try {
      fn();
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains(needle));
    }
  };
  fails([] { parse_duration("5x", "--deadline"); }, "--deadline: unknown unit 'x'");
  fails([] { parse_duration("", "--deadline"); }, "expected a number");
  fails([] { parse_duration("-3h", "--deadline"); }, "expected a number");
  fails([] { parse_bytes("20Q", "--size"); }, "--size: unknown unit 'q'");
  fails([] { parse_bytes("abc", "--size"); }, "expected a number");
  fails([] { parse_pricing("cheap"); }, "on-demand, spot, reserved-1y or reserved-3y");
  fails([] { parse_dtype("int8"); }, "fp32, tf32, fp16 or bf16");
}

TEST_CASE("money and durations print for people") {
  CHECK(format_money(1234.5) == "$1,234.50");
  CHECK(format_money(0.526) == "$0.53");
  CHECK(format_money(1234567.891) == "$1,234,567.89");
  CHECK(format_duration(45) == "45 s");
  // A small job reads as what it takes and costs, never "0 s, $0.00".
  CHECK(format_duration(0.42) == "420 ms");
  CHECK(format_duration(3.4) == "3.4 s");
  CHECK(format_duration(0.0000123) == "12 us");
  CHECK(format_duration(0) == "0 s");
  CHECK(format_money(0.0031) == "$0.0031");
  CHECK(format_money(0.000012345) == "$0.000012");
  CHECK(format_money(-0.004) == "-$0.004");
  CHECK(format_money(0) == "$0.00");
  CHECK(format_duration(1800) == "30 min");
  CHECK(format_duration(36000) == "10.0 h");
  CHECK(format_duration(3 * 86400 + 3600) == "3.0 d");
}
