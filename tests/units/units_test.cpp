// One reading of sizes, rates and durations (nubo/units.hpp): every case of cases.tsv, which
// the Python test (through the C ABI) reads too, and the formatting for people.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/text.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace {

struct Case {
  std::string kind, text, expected, message;
};

std::vector<Case> cases() {
  std::ifstream in(NUBO_UNITS_CASES);
  REQUIRE(in);
  std::vector<Case> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream s(line);
    for (std::string field; std::getline(s, field, '\t');) f.push_back(field);
    REQUIRE(f.size() >= 3);
    out.push_back({f[0], f[1], f[2], f.size() > 3 ? f[3] : ""});
  }
  return out;
}

double parse(const Case& c) {
  if (c.kind == "bytes") return static_cast<double>(nubo::parse_bytes(c.text, "--size"));
  if (c.kind == "rate") return nubo::parse_rate(c.text, "--rate");
  REQUIRE(c.kind == "duration");
  return nubo::parse_duration(c.text, "--timeout");
}

}  // namespace

TEST_CASE("every spelling of a size, a rate and a duration reads as the table says") {
  const auto all = cases();
  CHECK(all.size() > 50);
  for (const auto& c : all) {
    CAPTURE(c.kind, c.text);
    if (c.expected == "error") {
      try {
        parse(c);
        FAIL("accepted");
      } catch (const nubo::Error& e) {
        CHECK(e.code() == nubo::Errc::invalid_argument);
        CHECK_THAT(e.what(), Catch::Contains(c.message) && Catch::Contains("--"));
      }
    } else {
      CHECK(parse(c) == Approx(std::stod(c.expected)).epsilon(1e-12));
    }
  }
}

TEST_CASE("sizes, durations and clocks print for people") {
  CHECK(nubo::format_bytes(512) == "512 B");
  CHECK(nubo::format_bytes(80.0 * (1ull << 30)) == "80.0 GiB");
  CHECK(nubo::format_bytes(1.5 * (1 << 20), 2) == "1.50 MiB");
  CHECK(nubo::format_duration(45) == "45 s");
  // A small job reads as what it takes, never "0 s".
  CHECK(nubo::format_duration(0.42) == "420 ms");
  CHECK(nubo::format_duration(3.4) == "3.4 s");
  CHECK(nubo::format_duration(0.0000123) == "12 us");
  CHECK(nubo::format_duration(0) == "0 s");
  CHECK(nubo::format_duration(1800) == "30 min");
  CHECK(nubo::format_duration(36000) == "10.0 h");
  CHECK(nubo::format_duration(3 * 86400 + 3600) == "3.0 d");
  CHECK(nubo::format_duration(INFINITY) == "forever");
  CHECK(nubo::format_clock(65) == "0:01:05");
  CHECK(nubo::format_clock(-1) == "--:--:--");
  CHECK(nubo::format_clock(NAN) == "--:--:--");
}
