// One worker's copy of the model: parameters, optimizer state, gradient buckets and activations
// on the worker's device, and the forward, backward and update passes. It computes through the
// public Worker API (gemm, fill, collectives) like any application, plus the model's own
// kernel table (kernels.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nubo/dataset.hpp"
#include "nubo/parallel.hpp"
#include "nubo/train.hpp"
#include "train/kernels.hpp"
#include "train/layout.hpp"

namespace nubo::train {

// Times of one step on this worker, in seconds.
struct StepTimes {
  double data = 0, compute = 0, comm_wait = 0, update = 0, stats = 0;
  // Of compute, the time in GEMMs: measured on host workers only, whose GEMMs run to completion
  // in the call (a GPU's are queued on its stream); 0 on GPUs.
  double gemm = 0;
};

// What the step-end all-reduce carries: statistics and the decisions every rank must share.
enum StatSlot { kLossSum = 0, kCorrect, kCount, kStopVotes, kCheckpointDue, kStatSlots };

class Replica {
 public:
  Replica(Worker& w, const Layout& layout, const TrainerOptions& options, std::size_t max_rows);

  // Rank 0 writes `initial` (it must hold layout.total values); then everyone takes rank 0's.
  void broadcast_parameters(Worker& w, std::span<const float> initial);
  // Cuts the gradients into buckets of cap_bytes (0: one).
  void set_buckets(Worker& w, std::size_t cap_bytes);
  std::size_t bucket_count() const { return buckets_.size(); }

  // One training step on this worker's shard of `rows`. `flags` (stop vote, checkpoint due)
  // are added into the step-end all-reduce; the result is the sum over all ranks.
  // apply = false: compute and all-reduce the gradients but leave parameters alone (autotuning).
  std::vector<float> train_step(Worker& w, const Dataset& data, std::span<const std::size_t> rows,
                                std::int64_t adam_step, float lr, float stop_vote,
                                float checkpoint_due, bool apply, StepTimes& times);
  // Loss sum, correct and count over this worker's shard of `data`, all-reduced.
  std::vector<float> evaluate(Worker& w, const Dataset& data);

  // Host copies of the flat vectors (parameters; optimizer state 1 and 2).
  std::vector<float> read(int which) const;
  void read(int which, std::span<float> out) const;  // out holds exactly the vector
  void write(int which, std::span<const float> values);
  std::size_t optimizer_states() const;  // 1 (SGD velocity) or 2 (Adam m, v)
  int rank() const { return rank_; }

 private:
  struct Bucket {
    BucketRange range;
    Buffer<float> grad;
  };
  // Forward over `rows` rows already in acts_[0]; leaves logits in acts_.back().
  void forward(Worker& w, std::size_t rows, StepTimes& times);
  // w.gemm, its time added to times.gemm on host workers.
  void gemm(Worker& w, const Gemm& g, const DeviceBuffer& a, const DeviceBuffer& b, DeviceBuffer& c,
            StepTimes& times);
  std::vector<float> host_stats(std::size_t rows);
  // Layer l's weights (in x out, row-major) and biases inside a flat parameter-sized vector.
  Buffer<float> weights(Buffer<float>& flat, std::size_t l);
  Buffer<float> biases(Buffer<float>& flat, std::size_t l);

  std::unique_ptr<Kernels> k_;
  const Layout& layout_;
  TrainerOptions opt_;
  std::size_t max_rows_;
  int rank_;
  bool host_gemms_;  // the worker's GEMMs run on the host, synchronously: they can be timed
  Buffer<float> params_, state1_, state2_;
  std::vector<Bucket> buckets_;
  std::vector<Buffer<float>> acts_;  // acts_[0] = input, acts_[l + 1] = output of layer l
  Buffer<float> dz_, da_, probs_, loss_, stats_;
  Buffer<std::int32_t> labels_;
  std::vector<float> host_x_;
  std::vector<std::int32_t> host_y_;
  std::vector<std::size_t> shard_rows_;
};

}  // namespace nubo::train
