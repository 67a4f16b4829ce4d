#include <catch2/catch.hpp>

#include "common/crc32c.hpp"
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

TEST_CASE("split keeps empty fields, and split_whitespace drops them") {
  CHECK(text::split("a,,b", ',').size() == 3);
  CHECK(text::split("", ',').size() == 1);
  auto w = text::split_whitespace("  a \t b\n c ");
  REQUIRE(w.size() == 3);
  CHECK(w[2] == "c");
}

TEST_CASE("printable escapes what would drive a terminal and keeps the rest") {
  CHECK(printable("plain/path é 日本.txt") == "plain/path é 日本.txt");
  CHECK(printable("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(printable("\x1b[2Jcleared") == "\\x1b[2Jcleared");
  CHECK(printable(std::string("nul\0del\x7f", 8)) == "nul\\x00del\\x7f");
  // C1 controls, raw (8-bit CSI) and as UTF-8 (U+009B), and bytes that are not UTF-8.
  CHECK(printable("\x9b"
                  "31m") == "\\x9b31m");
  CHECK(printable("\xc2\x9b"
                  "31m") == "\\xc2\\x9b31m");
  CHECK(printable("\xff\xfe") == "\\xff\\xfe");
  CHECK(printable("\xc3") == "\\xc3");                    // a sequence cut short
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");           // an overlong '/'
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  // A right-to-left override would show "txt.exe" as "exe.txt".
  CHECK(printable("evil\u202etxt.exe") == "evil\\u202etxt.exe");
  CHECK(printable("").empty());
}

TEST_CASE("CRC-32C gives the published check values, whole or in pieces") {
  const std::string digits = "123456789";
  CHECK(crc32c::extend(0, digits.data(), digits.size()) == 0xe3069283u);
  CHECK(crc32c::extend(0, nullptr, 0) == 0u);
  // RFC 3720's examples: 32 bytes of zeros, of 0xff, and ascending.
  std::string zeros(32, '\0'), ones(32, '\xff'), up(32, '\0');
  for (int i = 0; i < 32; ++i) up[static_cast<std::size_t>(i)] = static_cast<char>(i);
  CHECK(crc32c::extend(0, zeros.data(), 32) == 0x8a9136aau);
  CHECK(crc32c::extend(0, ones.data(), 32) == 0x62a8ab43u);
  CHECK(crc32c::extend(0, up.data(), 32) == 0x46dd794eu);
  // In pieces of every size, across the 8-byte steps.
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>(i * 7 + 3);
  const auto whole = crc32c::extend(0, text.data(), text.size());
  for (std::size_t cut : {1u, 7u, 8u, 9u, 500u, 999u}) {
    auto c = crc32c::extend(0, text.data(), cut);
    CHECK(crc32c::extend(c, text.data() + cut, text.size() - cut) == whole);
    auto p = crc32c::extend_portable(0, text.data(), cut);
    CHECK(crc32c::extend_portable(p, text.data() + cut, text.size() - cut) == whole);
  }
  CHECK(crc32c::extend_portable(0, digits.data(), digits.size()) == 0xe3069283u);
}

TEST_CASE("group_digits puts a comma every three digits from the right") {
  CHECK(nubo::text::group_digits("") == "");
  CHECK(nubo::text::group_digits("7") == "7");
  CHECK(nubo::text::group_digits("600") == "600");
  CHECK(nubo::text::group_digits("2600") == "2,600");
  CHECK(nubo::text::group_digits("1234567") == "1,234,567");
}

TEST_CASE("base64 round trips, and what is not base64 is refused") {
  const std::string data = "any carnal pleasure";
  for (std::size_t n = 0; n <= data.size(); ++n) {
    const auto text = nubo::text::base64(data.data(), n);
    CHECK(text.size() == 4 * ((n + 2) / 3));
    const auto back = nubo::text::unbase64(text);
    REQUIRE(back);
    CHECK(std::string(reinterpret_cast<const char*>(back->data()), back->size()) ==
          data.substr(0, n));
  }
  CHECK(nubo::text::base64("\xff\xfe", 2) == "//4=");
  for (const char* bad : {"abc", "ab=c", "a===", "ab!d", "=abc", "ab==abcd"})
    CHECK_FALSE(nubo::text::unbase64(bad));
}

TEST_CASE("parse_utc reads a UTC time, seconds optional, and nothing else") {
  using nubo::text::parse_utc;
  CHECK(parse_utc("2026-12-08T09:00:00Z") == 1796720400);
  CHECK(parse_utc("2026-12-08T09:00Z") == 1796720400);
  CHECK(parse_utc("1970-01-01T00:00:00Z") == 0);
  CHECK(nubo::text::utc_text(1796720400) == "2026-12-08T09:00:00Z");
  for (const char* bad : {"tomorrow", "2026-12-08T09:00", "2026-12-08", "2026-13-08T09:00Z",
                          "2026-12-08T24:00Z", "2026-12-08T09:00:00Zx", "", "2026-12-08T09:60Z"})
    CHECK_FALSE(parse_utc(bad));
}
