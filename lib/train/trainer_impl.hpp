// The state of a DataParallelTrainer, shared by trainer.cpp (steps, fit, evaluate),
// checkpoint.cpp (save, load, resume) and autotune.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nubo/train.hpp"
#include "train/layout.hpp"
#include "train/replica.hpp"

namespace nubo {

// A checkpoint's content, copied from the trainer at a step boundary: what a background write
// works from while training goes on.
struct CheckpointSnapshot {
  std::string path;
  std::string meta;                        // meta.json
  std::vector<std::vector<float>> values;  // params, then the optimizer's states
  double delay_s = 0;                      // NUBO_CHECKPOINT_DELAY: added to the write
};
struct CheckpointWrite {
  double seconds = 0;  // the write, staging to rename
  double bytes = 0;    // the archive's size
};
// Writes the checkpoint atomically and prunes fit()'s older ones (checkpoint.cpp).
CheckpointWrite write_checkpoint(const CheckpointSnapshot& snap, const TrainerOptions& opt);

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
  std::string resumed_from;  // the checkpoint the trainer was made from
  std::chrono::steady_clock::time_point last_checkpoint = std::chrono::steady_clock::now();

  // Measurements for the profile (worker local 0), over the steps of this process.
  train::StepTimes times;
  double wall_s = 0;
  std::uint64_t measured_steps = 0, measured_samples = 0;
  std::uint64_t checkpoints = 0;  // written
  std::uint64_t taken = 0;        // snapshots taken (written or being written)
  // checkpoint_auto: the interval in force, the delta it was planned with, and Daly's expected
  // waste for it (the fraction of the work lost to checkpoints, rework and restarts).
  double planned_interval_s = 0, planned_delta_s = 0, expected_waste = 0;
  // Seconds spent writing checkpoints (δ, summed), and the training time fit()'s periodic ones
  // stopped it for (`stalls` of them): the whole write when synchronous; the snapshot copy and
  // any wait for the write before when not. The final checkpoint stalls nothing: training ends.
  double write_s = 0, stall_s = 0, checkpoint_bytes = 0;
  std::uint64_t stalls = 0;
  // fit()'s checkpoint being written in the background (async_checkpoints): at most one.
  std::future<CheckpointWrite> background_write;

  // The optimizer's logical state (collective: every process calls it; local rank 0's copy).
  OptimizerState gather_state();
  // The checkpoint's content, from that state, into `snap` (rank 0's holder only).
  void snapshot(const std::string& path, OptimizerState&& st, CheckpointSnapshot& snap) const;
  // The background write's snapshot, reused by the next one once that write is done.
  std::shared_ptr<CheckpointSnapshot> spare_snapshot;
  void count_checkpoint(const CheckpointWrite& w);
  // Waits for the background write, if any; rethrows its error.
  void finish_background_write();
  // A fresh run in a checkpoint directory that holds an earlier run's checkpoints: they are
  // moved into DIR/earlier-<UTC time>/ (a local directory) or refused (s3://), so that the new
  // run's checkpoints are neither pruned against the old ones nor resumed past by them.
  void set_aside_earlier_run();
  void reap_background_write();  // the same, only when it has ended
  // checkpoint_auto: plans the interval again from a write of `delta` seconds when it drifted.
  void plan_interval(double delta);
  double checkpoint_interval_s() const {
    return opt.checkpoint_auto ? planned_interval_s : opt.checkpoint_seconds;
  }
  // Takes a snapshot and writes it in the background (after the write in flight, if any).
  void save_in_background(const std::string& path);

  std::uint64_t steps_per_epoch() const;
  void start_epoch(int e);  // draws epoch e's shuffle from rng
  // Epoch e from the generator's state at its start, at data position `pos` (checked by load).
  void restore_epoch(int e, const std::mt19937_64& state, std::size_t pos);
  // Runs one step; returns the all-reduced statistics (see train::StatSlot).
  std::vector<float> run_step(float stop_vote, bool checkpoint_due);
  bool single_process() const { return team.size() == team.local_size(); }
  bool holds_rank0() const { return replicas.at(0)->rank() == 0; }
  void apply_bucket_bytes(std::size_t bytes);
  void autotune();                       // autotune.cpp
  std::string autotune_outcome = "off";  // "off", "hit" or "miss"
};

}  // namespace nubo
