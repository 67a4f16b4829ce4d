#include <catch2/catch.hpp>

#include "common/csv.hpp"
#include "nubo/error.hpp"

using namespace nubo;

TEST_CASE("csv reads a header, comments, quoted fields and named columns") {
  auto t = csv::Table::parse("# comment\nname,price\n\"a, b\",1.5\n\"say \"\"hi\"\"\", 2\n",
                             "t.csv", {"name", "price"});
  REQUIRE(t.rows().size() == 2);
  CHECK(t.rows()[0].str("name") == "a, b");
  CHECK(t.rows()[1].str("name") == "say \"hi\"");
  CHECK(t.rows()[1].number("price", 0, 10) == 2.0);
  CHECK(t.rows()[0].line() == 3);
}

TEST_CASE("csv errors name the source, the line and the problem") {
  CHECK_THROWS_WITH(csv::Table::parse("a,b\n1,2,3\n", "x.csv", {}),
                    Catch::Contains("x.csv:2") && Catch::Contains("expected 2 fields, found 3"));
  CHECK_THROWS_WITH(csv::Table::parse("a,b\n\"1,2\n", "x.csv", {}),
                    Catch::Contains("x.csv:2") && Catch::Contains("unterminated"));
  CHECK_THROWS_WITH(csv::Table::parse("a,b\n", "x.csv", {"c"}),
                    Catch::Contains("missing column 'c'"));
  CHECK_THROWS_WITH(csv::Table::parse("a,a\n", "x.csv", {}), Catch::Contains("appears twice"));
  CHECK_THROWS_WITH(csv::Table::parse("# only comments\n", "x.csv", {}),
                    Catch::Contains("no header"));
  auto t = csv::Table::parse("a\nzz\n", "x.csv", {"a"});
  CHECK_THROWS_WITH(t.rows()[0].number("a", 0, 1),
                    Catch::Contains("x.csv:2") && Catch::Contains("'zz'"));
  CHECK_THROWS_WITH(t.rows()[0].str("nope"), Catch::Contains("missing column 'nope'"));
}

TEST_CASE("csv rows outlive the table value they came from") {
  std::vector<csv::Row> rows;
  {
    auto t = csv::Table::parse("a\n1\n", "x.csv", {"a"});
    rows = t.rows();
  }
  CHECK(rows[0].integer("a", 0, 5) == 1);
}
