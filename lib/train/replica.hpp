// One worker's part of the model: its parameters (whole, or a shard at ZeRO stage 3), gradients
// and activations on the worker's device, the forward and backward passes, and the update, which
// a ShardedOptimizer runs over the gradient buckets as its slices. It computes through the public
// Worker API (gemm, cast, collectives) like any application, plus the model's own kernel table
// (kernels.hpp). In bf16 or f16 the GEMMs run in that type on 16-bit copies of the activations;
// bias, ReLU and softmax run in f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nubo/dataset.hpp"
#include "nubo/optimizer.hpp"
#include "nubo/parallel.hpp"
#include "nubo/train.hpp"
#include "train/kernels.hpp"
#include "train/layout.hpp"

namespace nubo::train {

// The sharded optimizer's options for the trainer's.
ShardedOptions sharded_options(const TrainerOptions& o);

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
  // max_rows: this worker's rows of one step (its micro-batches' buffers hold a share of them).
  Replica(Worker& w, const Layout& layout, const TrainerOptions& options, std::size_t max_rows);

  // Rank 0's `initial` (layout.total values; others may pass none) becomes every rank's
  // parameters, and the optimizer is made over buckets of cap_bytes (0: one). Collective.
  void start(Worker& w, std::span<const float> initial, std::size_t cap_bytes);
  // Cuts the gradients into buckets of cap_bytes again; the optimizer keeps its state.
  // Collective.
  void set_buckets(Worker& w, std::size_t cap_bytes);
  std::size_t bucket_count() const { return buckets_.size(); }

  // One training step on this worker's shard of `rows`, at learning rate lr. `flags` (stop
  // vote, checkpoint due) are added into the step-end all-reduce; the result is the sum over
  // all ranks. apply = false: compute and reduce the gradients but leave the model alone
  // (autotuning).
  std::vector<float> train_step(Worker& w, const Dataset& data, std::span<const std::size_t> rows,
                                float lr, float stop_vote, float checkpoint_due, bool apply,
                                StepTimes& times);
  // Loss sum, correct and count over this worker's shard of `data`, all-reduced.
  std::vector<float> evaluate(Worker& w, const Dataset& data);

  // The optimizer's logical state (master weights and the rule's state, whole), and back.
  // Collective.
  OptimizerState state();
  void load_state(const OptimizerState& state);
  std::size_t optimizer_states() const;  // 1 (SGD velocity) or 2 (Adam m, v)
  int rank() const { return rank_; }

 private:
  struct Bucket {
    BucketRange range;
    std::size_t slice;  // the optimizer's slice: buckets counted in the flat vector's order
  };
  // Forward over `rows` rows already in acts_[0]; leaves logits in acts_.back().
  void forward(Worker& w, std::size_t rows, StepTimes& times);
  // Backward of one micro-batch of `rows` rows; `last` starts each bucket's reduction as soon
  // as backward has produced it; `first` overwrites the gradients instead of adding to them.
  void backward(Worker& w, std::size_t rows, bool first, bool last, StepTimes& times);
  // w.gemm, its time added to times.gemm on host workers.
  void gemm(Worker& w, const Gemm& g, const DeviceBuffer& a, const DeviceBuffer& b, DeviceBuffer& c,
            StepTimes& times);
  std::vector<float> host_stats(std::size_t rows);
  void make_optimizer(Worker& w, std::size_t cap_bytes, std::span<const float> initial,
                      const OptimizerState* state);
  // Where flat parameter i (the unpadded vector's index) lives in the optimizer's layout.
  std::size_t padded(std::size_t i) const;
  // Layer l's weights (in x out, row-major) and biases, in the precision: a view of the
  // parameters (stage 3: of its bucket, gathered), or of the gradients.
  DeviceBuffer weights(std::size_t l);
  DeviceBuffer biases(std::size_t l);
  DeviceBuffer grad_weights(std::size_t l);
  DeviceBuffer grad_biases(std::size_t l);
  // Stage 3: the slice holding layer l gathered (and the next one in `direction` prefetched).
  void need_layer(std::size_t l, int direction);
  void release_all();
  // x as the GEMMs' type: x itself in f32, else its 16-bit copy in `copy` (the first n values).
  DeviceBuffer as_compute(Worker& w, DeviceBuffer& x, DeviceBuffer& copy, std::size_t n);

  std::unique_ptr<Kernels> k_;
  const Layout& layout_;
  TrainerOptions opt_;
  StagePlan stage_;         // what opt_.zero_stage shards
  bool mixed_;              // the GEMMs run in 16 bits
  std::size_t micro_rows_;  // rows of one micro-batch
  int rank_;
  bool host_gemms_;  // the worker's GEMMs run on the host, synchronously: they can be timed
  std::unique_ptr<ShardedOptimizer> optimizer_;
  std::vector<std::size_t> layer_slice_;      // the optimizer's slice of each layer
  DeviceBuffer params_;                       // stages 0 to 2: the whole padded parameters
  DeviceBuffer grads_;                        // the whole padded gradients
  std::vector<DeviceBuffer> gathered_;        // stage 3: the slices gathered
  std::vector<Bucket> buckets_;               // in the order backward completes them
  std::vector<Buffer<float>> acts_;           // acts_[0] = input, acts_[l + 1] = output of layer l
  std::vector<DeviceBuffer> acts16_;          // 16-bit copies of each layer's input
  DeviceBuffer z16_, dz16_, da16_, bgrad16_;  // 16-bit scratch
  Buffer<float> dz_, da_, probs_, loss_, stats_, bias32_, bgrad32_;
  Buffer<std::int32_t> labels_;
  std::vector<float> host_x_;
  std::vector<std::int32_t> host_y_;
};

}  // namespace nubo::train
