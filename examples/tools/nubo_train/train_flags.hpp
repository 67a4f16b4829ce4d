// nubo-train's flags, as given on the command line: main() adds them, run_training() reads them.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "nubo/dataset.hpp"

namespace nubo_train {

struct TrainFlags {
  std::string devices, hidden = "256,128", checkpoint_dir, checkpoint_every, mtbi, profile_path,
                       instance, pricing = "on-demand", data_dir = nubo::kFashionMnistDir,
                       optimizer = "sgd", schedule = "cosine";
  int epochs = 10, zero = 0, accumulate = 1;
  std::string precision = "f32", grad_compression = "none";
  bool error_feedback = false;
  std::size_t batch = 128, subset = 0;
  double lr = 0.05, bucket_mb = 25, clip = 0;
  std::uint64_t seed = 1;
  bool resume = false, fresh = false, strict_resume = false, autotune = false, quiet = false,
       sync_checkpoints = false;
};

// The flags on `app`, each writing into `f`; --help shows each one's default.
void add_train_flags(CLI::App& app, TrainFlags& f);

}  // namespace nubo_train
