// The one JSON reader: nesting bounded (memory linear in the document whatever its depth),
// duplicate keys refused, numbers checked before any conversion, and any bytes at all answered
// with nubo::Error, never another exception, a crash or a long wait.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "common/json.hpp"
#include "error_of.hpp"

using nubo_test::contains;
using nubo_test::error_of;
namespace json = nubo::json;

TEST_CASE("nesting deeper than the limit is refused at the level that passed it") {
  // 40,000 levels of '[' once took 2.96 GB: each level held its whole path as a label.
  const std::string deep(40000, '[');
  const auto e = error_of([&] { json::parse(deep, "catalog.json"); });
  CHECK(contains(e, "catalog.json: nested deeper than 256 levels"));
  std::string objects;
  for (int i = 0; i < 300; ++i) objects += "{\"k\":";
  CHECK(contains(error_of([&] { json::parse(objects, "q"); }), "at ...k.k.k"));
  // 256 levels are a document.
  const auto ok = std::string(json::kMaxDepth, '[') + std::string(json::kMaxDepth, ']');
  CHECK(json::parse(ok, "ok").is_array());
  const auto over = std::string(json::kMaxDepth + 1, '[') + std::string(json::kMaxDepth + 1, ']');
  CHECK(contains(error_of([&] { json::parse(over, "over"); }), "nested deeper"));
}

TEST_CASE("the place of a duplicate key is named, however deep") {
  const auto e = error_of([] { json::parse(R"({"a":[{"b":1},{"c":{"d":1,"d":2}}]})", "f"); });
  CHECK(contains(e, "f: the key 'd' appears twice in a[1].c"));
  // A hostile key is shown escaped, and cut.
  const auto k = error_of([] { json::parse("{\"\\u001b[2J\":1,\"\\u001b[2J\":2}", "f"); });
  CHECK(contains(k, "\\x1b[2J"));
}

TEST_CASE("numbers are checked before they are converted") {
  const auto doc = json::parse(
      R"({"big":1e30,"neg":-1,"half":1.5,"max":18446744073709551615,"over":18446744073709551616,
          "one":1.0,"small":-9223372036854775808,"s":"7"})",
      "f");
  CHECK(contains(error_of([&] { json::number<int>(doc["big"], "f: big"); }),
                 "f: big: 1e+30 is outside -2147483648 to 2147483647"));
  CHECK(contains(error_of([&] { json::number<std::uint64_t>(doc["neg"], "neg"); }), "outside"));
  CHECK(contains(error_of([&] { json::number<int>(doc["half"], "half"); }), "not a whole number"));
  CHECK(json::number<std::uint64_t>(doc["max"], "max") ==
        std::numeric_limits<std::uint64_t>::max());
  CHECK(contains(error_of([&] { json::number<std::uint64_t>(doc["over"], "over"); }), "outside"));
  CHECK(json::number<int>(doc["one"], "one") == 1);
  CHECK(json::number<std::int64_t>(doc["small"], "small") ==
        std::numeric_limits<std::int64_t>::min());
  CHECK(contains(error_of([&] { json::number<double>(doc["s"], "s"); }),
                 "a number is needed, not string"));
  CHECK(contains(error_of([&] { json::number<double>(doc["big"], "b", 0.0, 1e6); }),
                 "outside 0 to 1000000"));
  CHECK(contains(error_of([] { json::parse("[1e400]", "f"); }), "f: not valid JSON"));
}

TEST_CASE("any bytes are a document or a nubo::Error") {
  std::mt19937_64 random(43);
  const std::string alphabet = "[]{}\",:0123456789.eE+-truefalsnl \\u\x01\xff";
  for (int round = 0; round < 3000; ++round) {
    std::string text(random() % 200, ' ');
    for (auto& c : text)
      c = random() % 4 == 0 ? static_cast<char>(random()) : alphabet[random() % alphabet.size()];
    try {
      const auto doc = json::parse(text, "random");
      (void)doc.dump();
    } catch (const nubo::Error&) {
    }
  }
  // Random nesting, opened and closed in any order.
  for (int round = 0; round < 300; ++round) {
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "[{\"a\":"[random() % 6];
    try {
      (void)json::parse(text, "nesting");
    } catch (const nubo::Error&) {
    }
  }
}
