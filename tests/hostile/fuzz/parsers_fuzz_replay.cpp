// The parsers fuzz target as a plain test (tests/support/fuzz_replay.hpp): a seed for each
// reader, its first byte picking it (parsers_fuzz.cpp), and the inputs that once broke them.
#include "fuzz_replay.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> seeds = {
      std::string(1, '\0') +
          R"({"horizon": "48h", "jobs": [{"name": "a", "workload": {"params": "7B", "tokens": "1B"},
             "deadline": "36h", "tag": "team-a", "command": "python t.py\necho done"}],
             "reservations": [{"instance": "p4d.24xlarge", "count": 2, "term": "1y"}]})",
      std::string(1, '\1') +
          R"({"now": "2h", "jobs": [{"name": "a", "state": "running", "started": "1h",
             "progress": 1e-300}]})",
      std::string(1, '\2') +
          R"({"verdict":"healthy","threshold":0.8,"seconds":1,"devices":[{"device":0,"verdict":
             "healthy"}],"measurements":[{"check":"gemm-bf16","device":0,"measured":90,
             "expected":100,"unit":"TFLOP/s","ratio":1e400,"verdict":"healthy"}]})",
      std::string(1, '\3') + std::string("\x2f\x00\x40\x00", 4) +
          "arn:aws:kms:x@127.0.0.1/#:123456789012:key/abc" + std::string(64, '\7') +
          std::string(8, '\0'),
      std::string(1, '\4') + "arn:aws:kms:us-east-1\r\nX: 1:123456789012:key/abc",
      std::string(1, '\5') + "x@127.0.0.1/#",
      std::string(1, '\6') + "{'Gpus': [{'Name': 'A100', 'MemoryInfo': {'SizeInMiB': 40960}}]}",
      std::string(1, '\7') + R"([1e30, -1, 1.5, 18446744073709551616, 0.5])",
      std::string(1, '\x08') + "R\rsetup: touch X\r\xe2\x80\xa8\x1b[2J'\"$(x)`y`"};
  return nubo_test::replay_main(argc, argv, "parsers_fuzz_replay", seeds,
                                {.mutations = 400,
                                 .keep = 1,
                                 .pieces = {"[", "{", "\"", "\\u0000", "1e400", "-1", "\r", "\n",
                                            "@", "/", ":", "*", "\xe2\x80\xa8", "\xff"}});
}
