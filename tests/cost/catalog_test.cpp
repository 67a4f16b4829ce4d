#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "cost_helpers.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

using namespace nubo;
using namespace nubo::cost;

TEST_CASE("a catalog in nubo's CSV format holds its instances at their published prices") {
  auto c = cost_test::fixed_catalog();
  struct Row {
    const char* name;
    const char* gpu;
    int gpus;
    double on_demand;
  };
  for (auto r :
       {Row{"p5.48xlarge", "H100-SXM5-80GB", 8, 98.32},
        Row{"p4d.24xlarge", "A100-SXM4-40GB", 8, 32.77},
        Row{"p4de.24xlarge", "A100-SXM4-80GB", 8, 40.97},
        Row{"p3.2xlarge", "V100-SXM2-16GB", 1, 3.06}, Row{"p3.8xlarge", "V100-SXM2-16GB", 4, 12.24},
        Row{"p3.16xlarge", "V100-SXM2-16GB", 8, 24.48},
        Row{"p3dn.24xlarge", "V100-SXM2-32GB", 8, 31.21}, Row{"g4dn.xlarge", "T4", 1, 0.526},
        Row{"g4dn.12xlarge", "T4", 4, 3.912}, Row{"g5.xlarge", "A10G", 1, 1.006},
        Row{"g5.12xlarge", "A10G", 4, 5.672}, Row{"g5.48xlarge", "A10G", 8, 16.288},
        Row{"g6.xlarge", "L4", 1, 0.8048}, Row{"Standard_ND96asr_v4", "A100-SXM4-40GB", 8, 27.197},
        Row{"Standard_NC24ads_A100_v4", "A100-PCIE-80GB", 1, 3.673},
        Row{"a2-highgpu-1g", "A100-SXM4-40GB", 1, 0.73948 + 2.93391}}) {
    INFO(r.name);
    const auto& in = c.get(r.name);
    CHECK(in.gpu_model == r.gpu);
    CHECK(in.gpus == r.gpus);
    CHECK(in.on_demand == Approx(r.on_demand).epsilon(1e-4));
    CHECK(in.price_date == "2026-11");
    CHECK_FALSE(in.source.empty());
    if (in.spot >= 0) {
      CHECK(in.spot < in.on_demand);
      CHECK(in.spot_date == "2026-11");
    }
  }
  // The issue quotes p5 spot at "about 21-30"; the catalog's median sits in that range.
  CHECK(c.get("p5.48xlarge").spot > 21);
  CHECK(c.get("p5.48xlarge").spot < 30);
  CHECK(c.get("g5.xlarge").region == "us-west-2");
  CHECK(c.provider("aws").object_storage_gb_month == 0.023);
  CHECK(c.provider("aws").block_storage_gb_month == 0.08);
  CHECK(c.provider("aws").cross_zone_gb == 0.01);
}

TEST_CASE("reserved prices are derived from an overridable discount and marked") {
  auto c = cost_test::fixed_catalog();
  const auto& p4d = c.get("p4d.24xlarge");
  CHECK(p4d.reserved_1y_derived);
  CHECK(p4d.reserved_1y == Approx(32.77 * 0.6));
  CHECK(p4d.reserved_3y == Approx(32.77 * 0.4));
  // The seed's 50-75% off.
  auto seed = cost_test::fixed_catalog();
  seed.set_reserved_discounts({.one_year = 0.5, .three_year = 0.75});
  CHECK(seed.get("p4d.24xlarge").reserved_1y == Approx(16.385));
  CHECK(seed.get("p4d.24xlarge").reserved_3y == Approx(8.1925));
  CHECK_THROWS_AS(c.set_reserved_discounts({.one_year = 1.0, .three_year = 0.5}), Error);
}

TEST_CASE("GPU link bandwidth is derived from the interconnect and the GPU table") {
  auto c = cost_test::fixed_catalog();
  CHECK(c.get("p4d.24xlarge").gpu_link_gbs == Approx(300));   // 600 GB/s NVLink / 2
  CHECK(c.get("p5.48xlarge").gpu_link_gbs == Approx(450));    // 900 / 2
  CHECK(c.get("g5.12xlarge").gpu_link_gbs == Approx(31.52));  // PCIe 4 x16: 16 x 0.985 x 2
  CHECK(c.get("g4dn.12xlarge").gpu_link_gbs == Approx(15.76));
  CHECK(c.get("p4d.24xlarge").gpu_link_derived);
}

namespace {
const std::string kHeader =
    "provider,instance,region,gpu_model,gpus,interconnect,vcpus,memory_gib,network_gbps,"
    "on_demand,spot\n";

void rejects(const std::string& rows, const std::string& needle) {
  auto c = Catalog::empty();
  try {
    c.load_text(kHeader + rows, "mine.csv");
    FAIL("expected " << needle);
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains(needle));
  }
  CHECK(c.instances().empty());  // a bad file changes nothing
}
}  // namespace

TEST_CASE("a bad catalog row is rejected with the file, the line and the reason") {
  rejects("aws,x,r,T4,1,none,4,16,10,-1,\n", "mine.csv:2: on_demand: a price cannot be negative");
  rejects("aws,x,r,T4,1,none,4,16,10,1,2\n", "mine.csv:2: spot: 2 $/h is above the on-demand");
  rejects("aws,x,r,T4,0,none,4,16,10,1,\n", "mine.csv:2: gpus: an instance needs at least one GPU");
  rejects("aws,x,r,B300,8,nvswitch,4,16,10,1,\n",
          "mine.csv:2: gpu_model: unknown GPU model 'B300'");
  rejects("aws,x,r,T4,1,none,4,16,10,abc,\n", "mine.csv:2: on_demand");
  rejects("aws,x,r,T4,2,none,4,16,10,1,\n", "mine.csv:2: interconnect: 'none' with 2 GPUs");
  rejects("aws,x,r,T4,2,nvlink,4,16,10,1,\n", "T4 has no NVLink");
  rejects("aws,x,r,T4,1.5,none,4,16,10,1,\n", "gpus: expected a whole number");
  rejects("aws,x,r,T4,1,none,4,16,10,,\n", "on_demand: missing value");
  rejects("aws,x,r,T4,1,none,4,16,10,1,\naws,x,r,T4,1,none,4,16,10,2,\n", "appears twice");
  rejects("aws,ok,r,T4,1,none,4,16,10,1,\n# a comment\naws,x,r,T4,1,none,4,16,10,1,5\n",
          "mine.csv:4: spot");
}

TEST_CASE("a catalog's names that could become code in a job file are refused, naming them") {
  // A region with a newline once wrote its second half as a line of an sbatch script.
  auto c = Catalog::empty();
  for (const char* region : {"us-east-1\\ntouch X #", "R\\rsetup: touch X", "us-east-1\\u001b[2J",
                             "us\\u2028east", "us\\u202eeast"}) {
    CAPTURE(region);
    CHECK_THROWS_WITH(c.load_text(std::string(R"({"instances": [{"provider": "aws", "instance":
        "x", "region": ")") + region + R"(", "gpu_model": "T4", "gpus": 1, "on_demand": 1}]})",
                                  "mine.json"),
                      Catch::Contains("region: '"));
  }
  CHECK_THROWS_WITH(c.load_text(R"({"instances": [{"provider": "aws", "instance": "x\ny",
      "region": "r", "gpu_model": "T4", "gpus": 1, "on_demand": 1}]})",
                                "mine.json"),
                    Catch::Contains("instance: 'x\\ny' holds a control character"));
}

TEST_CASE("a catalog file with a bad header or format says so") {
  auto c = Catalog::empty();
  CHECK_THROWS_WITH(c.load_text("a,b,c\n1,2,3\n", "odd.csv"),
                    Catch::Contains("odd.csv") && Catch::Contains("neither"));
  CHECK_THROWS_WITH(c.load_text("provider,instance,region\naws,x,r\n", "short.csv"),
                    Catch::Contains("missing column 'gpu_model'"));
  CHECK_THROWS_WITH(c.load_text("{\"instances\": [", "bad.json"),
                    Catch::Contains("bad.json: not valid JSON"));
  // A number past double's range is nlohmann's out_of_range, not a parse_error: it crashed
  // nubo-cost before.
  CHECK_THROWS_WITH(c.load_text(R"({"instances": [{"provider": "aws", "instance": "x",
      "region": "r", "gpu_model": "T4", "gpus": 1, "on_demand": 1e400}]})",
                                "huge.json"),
                    Catch::Contains("huge.json: not valid JSON") && Catch::Contains("1e400"));
  for (const char* date : {"2026-13", "2026-00-10", "2026-02-30", "2025-02-29", "2026-04-31"}) {
    CAPTURE(date);
    CHECK_THROWS_WITH(c.load_text(std::string(R"({"instances": [{"provider": "aws",
        "instance": "x", "region": "r", "gpu_model": "T4", "gpus": 1, "on_demand": 1,
        "price_date": ")") + date + "\"}]}",
                                  "dates.json"),
                      Catch::Contains("price_date: expected a date"));
  }
  c.load_text(R"({"instances": [{"provider": "aws", "instance": "leap", "region": "r",
      "gpu_model": "T4", "gpus": 1, "on_demand": 1, "price_date": "2024-02-29"}]})",
              "leap.json");
  CHECK_THROWS_WITH(c.load_text("{\"machines\": []}", "bad.json"),
                    Catch::Contains("unknown key 'machines'"));
  try {
    c.load_file("/nonexistent/catalog.csv");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::not_found);
    CHECK_THAT(e.what(), Catch::Contains("/nonexistent/catalog.csv"));
  }
}

TEST_CASE("a JSON catalog's bad row is reported with its line") {
  auto c = Catalog::empty();
  const std::string json = R"({
  "instances": [
    {"provider": "aws", "instance": "ok", "region": "r", "gpu_model": "T4", "gpus": 1,
     "on_demand": 1.0},
    {"provider": "aws", "instance": "bad", "region": "r", "gpu_model": "T4", "gpus": 1,
     "on_demand": 1.0, "spot": 3.5}
  ]
})";
  try {
    c.load_text(json, "mine.json");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("mine.json:5: spot: 3.5 $/h is above the on-demand"));
  }
  c.load_text(R"({"instances": [{"provider": "aws", "instance": "ok", "region": "r",
                  "gpu_model": "T4", "gpus": 1, "on_demand": 1.0, "reserved_1y": 0.7}]})",
              "good.json");
  REQUIRE(c.instances().size() == 1);
  CHECK(c.instances()[0].reserved_1y == 0.7);
  CHECK_FALSE(c.instances()[0].reserved_1y_derived);
  CHECK(c.instances()[0].reserved_3y_derived);
}

TEST_CASE("a JSON catalog says what each value is: no duplicate keys, no numbers as strings") {
  auto c = Catalog::empty();
  const auto row = [](const std::string& fields) {
    return R"({"instances": [{"provider": "aws", "instance": "x", "region": "r",
               "gpu_model": "T4", )" +
           fields + "}]}";
  };
  CHECK_THROWS_WITH(c.load_text(row(R"("gpus": 1, "on_demand": 1.0, "on_demand": 0.1)"), "d.json"),
                    Catch::Contains("d.json: the key 'on_demand' appears twice in instances[0]"));
  CHECK_THROWS_WITH(c.load_text(R"({"instances": [], "instances": []})", "top.json"),
                    Catch::Contains("the key 'instances' appears twice in the document"));
  CHECK_THROWS_WITH(c.load_text(row(R"("gpus": 1, "on_demand": "3.1")"), "s.json"),
                    Catch::Contains("on_demand: expected a number, got string \"3.1\"") &&
                        Catch::Contains("without quotes"));
  CHECK_THROWS_WITH(c.load_text(row(R"("gpus": true, "on_demand": 1)"), "b.json"),
                    Catch::Contains("gpus: expected a number, got boolean true"));
  CHECK_THROWS_WITH(c.load_text(R"({"instances": [{"provider": "aws", "instance": 5,
                    "region": "r", "gpu_model": "T4", "gpus": 1, "on_demand": 1}]})",
                                "n.json"),
                    Catch::Contains("instance: expected a string, got number 5"));
  const std::string huge(1 << 20, '7');
  try {
    c.load_text(row(R"("gpus": 1, "on_demand": ")" + huge + "\""), "big.json");
    FAIL("a megabyte string where a price belongs was accepted");
  } catch (const nubo::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("on_demand: expected a number, got string \"777"));
    CHECK(std::string_view(e.what()).size() < 300);  // the value is cut short, not echoed whole
  }
  CHECK(c.instances().empty());  // every refusal left the catalog as it was
  c.load_text(row(R"("gpus": 1, "on_demand": 0.35, "spot": null)"), "ok.json");
  REQUIRE(c.instances().size() == 1);
  CHECK(c.instances()[0].on_demand == 0.35);
  CHECK(c.instances()[0].spot < 0);  // null: not given
}

TEST_CASE("a large catalog loads in one pass, replacing rows by key in any case") {
  auto c = Catalog::empty();
  std::string text = kHeader;
  const int rows = 20000;
  for (int i = 0; i < rows; ++i)
    text += "aws,g" + std::to_string(i) + ".xlarge,us-east-1,T4,1,none,4,16,10,1.5,\n";
  c.load_text(text, "big.csv");
  CHECK(c.instances().size() == rows);
  // The same keys in other cases replace the rows; new ones are added after them.
  c.load_text(std::string(kHeader) + "aws,G7.XLARGE,US-EAST-1,T4,1,none,4,16,10,0.5,\n" +
                  "aws,new.xlarge,us-east-1,T4,1,none,4,16,10,0.5,\n",
              "update.csv");
  CHECK(c.instances().size() == rows + 1);
  CHECK(c.instances()[7].on_demand == 0.5);
  CHECK(c.instances()[7].name == "G7.XLARGE");
  CHECK(c.instances().back().name == "new.xlarge");
}

TEST_CASE("a user's catalog adds rows, replaces rows with the same key, or replaces all") {
  auto c = cost_test::fixed_catalog();
  const auto before = c.instances().size();
  const std::string path = "/tmp/nubo_cost_catalog_test.csv";
  {
    std::ofstream f(path);
    f << kHeader << "aws,p4d.24xlarge,us-east-1,A100-SXM4-40GB,8,nvswitch,96,1152,400,20,5\n"
      << "lambda,gpu_8x_a100,us-tx-1,A100-SXM4-40GB,8,nvswitch,124,1800,0,10.32,\n";
  }
  c.load_file(path);
  CHECK(c.instances().size() == before + 1);
  CHECK(c.get("p4d.24xlarge").on_demand == 20);
  CHECK(c.get("gpu_8x_a100").provider == "lambda");
  bool fallback = false;
  c.provider("lambda", &fallback);
  CHECK(fallback);  // no storage prices for lambda: priced as aws
  CHECK(c.sources().back() == path);
  c.load_file(path, /*replace=*/true);
  CHECK(c.instances().size() == 2);
  std::remove(path.c_str());
}

TEST_CASE("a provider table replaces storage and network prices") {
  auto c = Catalog::builtin();
  c.load_text(
      "provider,object_storage_gb_month,block_storage_gb_month,block_storage_mbps,egress_tiers\n"
      "gcp,0.02,0.1,240,1024:0.12;inf:0.08\n",
      "gcp.csv");
  CHECK(c.provider("gcp").block_storage_mbps == 240);
  CHECK(c.provider("gcp").egress_tiers.size() == 2);
  auto bad = Catalog::empty();
  CHECK_THROWS_WITH(bad.load_text("provider,object_storage_gb_month,block_storage_gb_month,"
                                  "egress_tiers\ngcp,0.02,0.1,1024:0.12\n",
                                  "p.csv"),
                    Catch::Contains("p.csv:2: egress_tiers: the last tier must be 'inf:PRICE'"));
}
