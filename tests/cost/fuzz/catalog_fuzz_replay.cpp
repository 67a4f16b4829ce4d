// The catalog fuzz target as a plain test (tests/support/fuzz_replay.hpp): seeds are the
// built-in catalogs, a JSON catalog, and a profile.
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "fuzz_replay.hpp"

namespace {

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("catalog_fuzz_replay: seed " + path + " is missing");
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string json = R"({"instances": [
  {"provider": "aws", "instance": "p5.48xlarge", "region": "us-east-1", "gpu_model": "H100-SXM5-80GB",
   "gpus": 8, "interconnect": "nvswitch", "on_demand": 98.32, "spot": 31.5, "price_date": "2026-11"},
  {"provider": "lambda", "instance": "gpu_1x_a10", "region": "us-west-1", "gpu_model": "A10",
   "gpus": 1, "on_demand": 0.75}],
 "providers": [{"provider": "lambda", "object_storage_gb_month": 0.02,
   "block_storage_gb_month": 0.1, "egress_tiers": "inf:0"}]})";
  return nubo_test::replay_main(
      argc, argv, "catalog_fuzz_replay",
      {read(NUBO_SOURCE_DIR "/tests/data/fixed_instances.csv"),
       read(NUBO_SOURCE_DIR "/lib/cost/providers.csv"), json,
       read(NUBO_SOURCE_DIR "/tests/data/sample_profile.json"),
       read(NUBO_SOURCE_DIR "/tests/cost/fixtures/skypilot_aws.csv"),
       read(NUBO_SOURCE_DIR "/tests/cost/fixtures/skypilot_gcp.csv"),
       read(NUBO_SOURCE_DIR "/tests/cost/fixtures/gpuhunt_lambdalabs.csv"),
       read(NUBO_SOURCE_DIR "/tests/cost/fixtures/azure_retail.json"),
       read(NUBO_SOURCE_DIR "/tests/cost/fixtures/aws_reserved.csv")},
      {.mutations = 400,
       .pieces = {",", "\"", "{", "}", "[", "]", ":", "\n#", "\"gpus\": ", "null", "'",
                  "{'Gpus': [", "\r\n", "0.0", "H200", "\"Reserved\""}});
}
