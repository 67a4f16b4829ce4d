// The checkpoint fuzz target as a plain test (tests/support/fuzz_replay.hpp): the seed is the
// meta.json nubo writes, with the numbers a run of the fixture's has.
#include "fuzz_replay.hpp"

int main(int argc, char** argv) {
  const std::string meta = R"({"format": "nubo-checkpoint/1", "layers": [20, 32, 16, 4],
    "optimizer": "sgd", "rng_state": "1 2 3", "step": 2, "epoch": 0, "position": 128,
    "dataset": {"name": "synthetic", "rows": 128}, "global_batch": 64})";
  return nubo_test::replay_main(
      argc, argv, "checkpoint_fuzz_replay", {meta},
      {.mutations = 300, .pieces = {"\"step\": ", "\"epoch\": -1,", "\"position\": ", "[]", "{}"}});
}
