// The state of a DataParallelTrainer, shared by trainer.cpp (steps, fit, evaluate),
// checkpoint.cpp (save, load, resume) and autotune.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nubo/train.hpp"
#include "train/layout.hpp"
#include "train/replica.hpp"

namespace nubo {

struct DataParallelTrainer::Impl {
  Impl(Team& t, const TrainerOptions& o, std::shared_ptr<const Dataset> d);

  Team& team;
  TrainerOptions opt;
  std::shared_ptr<const Dataset> train;
  train::Layout layout;
  std::size_t max_rows = 0;                               // per worker
  std::vector<std::unique_ptr<train::Replica>> replicas;  // by local rank
  std::size_t bucket_bytes = 0;

  // Position in the data: the shuffle of epoch `epoch` came from `rng` as saved in
  // `epoch_rng_state`; `position` rows of it are done.
  std::mt19937_64 rng;
  std::string epoch_rng_state;
  std::vector<std::size_t> order;
  int epoch = -1;  // -1: no epoch started yet
  std::size_t position = 0;
  std::uint64_t step = 0;

  std::atomic<bool> stop{false};
  std::chrono::steady_clock::time_point last_checkpoint = std::chrono::steady_clock::now();

  // Measurements for the profile (worker local 0), over the steps of this process.
  train::StepTimes times;
  double wall_s = 0;
  std::uint64_t measured_steps = 0, measured_samples = 0;
  std::uint64_t checkpoints = 0;
  double checkpoint_s = 0, checkpoint_bytes = 0;

  std::uint64_t steps_per_epoch() const;
  void start_epoch(int e);  // draws epoch e's shuffle from rng
  void restore_epoch(int e, const std::string& rng_state, std::size_t pos);
  // Runs one step; returns the all-reduced statistics (see train::StatSlot).
  std::vector<float> run_step(float stop_vote, bool checkpoint_due);
  bool single_process() const { return team.size() == team.local_size(); }
  bool holds_rank0() const { return replicas.at(0)->rank() == 0; }
  void apply_bucket_bytes(std::size_t bytes);
  void autotune();                       // autotune.cpp
  std::string autotune_outcome = "off";  // "off", "hit" or "miss"
};

}  // namespace nubo
