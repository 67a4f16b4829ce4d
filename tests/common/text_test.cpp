#include <catch2/catch.hpp>

#include "common/text.hpp"
#include "nubo/error.hpp"

using namespace nubo;

TEST_CASE("parse_int accepts whole integers in range and names what is wrong otherwise") {
  CHECK(text::parse_int(" 42 ", "count", 0, 100) == 42);
  CHECK(text::parse_int("-3", "x", -5, 5) == -3);
  CHECK_THROWS_WITH(text::parse_int("4x", "count", 0, 100),
                    Catch::Contains("count") && Catch::Contains("'4x'"));
  CHECK_THROWS_WITH(text::parse_int("", "count", 0, 100), Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(text::parse_int("101", "count", 0, 100), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(text::parse_int("99999999999999999999999", "n", 0, 10),
                    Catch::Contains("out of range"));
  try {
    text::parse_int("abc", "n", 0, 1);
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
  }
}

TEST_CASE("parse_double rejects non-finite and trailing text") {
  CHECK(text::parse_double("1.5", "rate", 0, 2) == 1.5);
  CHECK_THROWS_WITH(text::parse_double("nan", "rate", 0, 2), Catch::Contains("rate"));
  CHECK_THROWS_WITH(text::parse_double("inf", "rate", 0, 2), Catch::Contains("rate"));
  CHECK_THROWS_WITH(text::parse_double("1.5e", "rate", 0, 2), Catch::Contains("'1.5e'"));
  CHECK_THROWS_WITH(text::parse_double("3", "rate", 0, 2), Catch::Contains("out of range"));
}

TEST_CASE("split keeps empty fields; split_whitespace drops them") {
  CHECK(text::split("a,,b", ',').size() == 3);
  CHECK(text::split("", ',').size() == 1);
  auto w = text::split_whitespace("  a \t b\n c ");
  REQUIRE(w.size() == 3);
  CHECK(w[2] == "c");
}
