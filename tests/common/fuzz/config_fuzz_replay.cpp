// The configuration fuzz target as a plain test (tests/support/fuzz_replay.hpp): a seed for each
// reader, its first byte picking it (config_fuzz.cpp).
#include "fuzz_replay.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> seeds = {
      std::string(1, '\0') +
          "[default]\naws_access_key_id = AKID\naws_secret_access_key = secret\nregion = "
          "eu-west-1\ns3 =\n  addressing_style = path\n  max_concurrent_requests = 20\n"
          "[profile other]\nendpoint_url = http://127.0.0.1:9000\n",
      std::string(1, '\1') +
          "\tGPU0\tGPU1\tGPU2\tGPU3\nGPU0\t X \tNV12\tSYS\tSYS\nGPU1\tNV12\t X \tSYS\tSYS\n"
          "GPU2\tSYS\tSYS\t X \tNV12\nGPU3\tSYS\tSYS\tNV12\t X \n",
      std::string(1, '\2') + R"({"a": [1, 2.5, -3e10, {"b": null, "c": "\u00e9"}], "d": true})",
      std::string(1, '\3') +
          "NUBO_LOG=debug\nNUBO_CUDA=0\nNUBO_RANK=1\nNUBO_WORLD_SIZE=2\nNUBO_RENDEZVOUS="
          "file:///tmp/x\nNUBO_TIMEOUT=2.5\nOMP_NUM_THREADS=4,2\nNUBO_SHM_DISABLE=1\n",
      std::string(1, '\4') + std::string(64, 'a') + "\n",
      std::string(1, '\5') + "a-shared-token-of-some-length\n"};
  // The first byte picks the reader: mutations keep it.
  return nubo_test::replay_main(
      argc, argv, "config_fuzz_replay", seeds,
      {.mutations = 500,
       .keep = 1,
       .pieces = {"[", "]", "=", "\n", "\t", "NV12", "SYS", "X", "\\u0000", "NUBO_RANK="}});
}
