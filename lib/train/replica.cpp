#include "train/replica.hpp"

#include <algorithm>
#include <chrono>

#include "nubo/error.hpp"

namespace nubo::train {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

ShardedOptions sharded_options(const TrainerOptions& o) {
  ShardedOptions s;
  // The trainer's Adam decays weights decoupled (AdamW's rule; plain Adam when it is 0).
  s.optimizer = o.optimizer == Optimizer::sgd ? OptimizerKind::sgd : OptimizerKind::adamw;
  s.lr = o.lr;
  s.momentum = o.momentum;
  s.beta1 = o.beta1;
  s.beta2 = o.beta2;
  s.eps = o.eps;
  s.weight_decay = o.weight_decay;
  s.stage = o.zero_stage;
  s.precision = o.precision;
  // Each rank's loss gradient is already divided by the global batch: the sum is the mean.
  s.gradient_op = ReduceOp::sum;
  s.max_grad_norm = o.max_grad_norm;
  s.wire = o.grad_compression;
  s.error_feedback = o.error_feedback;
  return s;
}

Replica::Replica(Worker& w, const Layout& layout, const TrainerOptions& options,
                 std::size_t max_rows)
    : k_(kernels_for(w)),
      layout_(layout),
      opt_(options),
      stage_(StagePlan::of(options.zero_stage, "trainer: zero_stage")),
      mixed_(options.precision != DType::f32),
      micro_rows_((max_rows + static_cast<std::size_t>(options.accumulate) - 1) /
                  static_cast<std::size_t>(options.accumulate)),
      rank_(w.rank()),
      host_gemms_(w.device().backend != Backend::cuda) {
  const std::size_t rows = std::max<std::size_t>(micro_rows_, 1);
  const std::size_t widest = *std::max_element(layout.widths.begin(), layout.widths.end());
  for (std::size_t width : layout.widths) acts_.push_back(w.alloc<float>(rows * width));
  dz_ = w.alloc<float>(rows * widest);
  da_ = w.alloc<float>(rows * widest);
  probs_ = w.alloc<float>(rows * layout.widths.back());
  loss_ = w.alloc<float>(rows);
  labels_ = w.alloc<std::int32_t>(rows);
  stats_ = w.alloc<float>(kStatSlots);
  bgrad32_ = w.alloc<float>(widest);
  if (mixed_) {
    for (std::size_t l = 0; l < layout.layers(); ++l)
      acts16_.push_back(w.alloc(opt_.precision, rows * layout.in(l)));
    z16_ = w.alloc(opt_.precision, rows * widest);
    dz16_ = w.alloc(opt_.precision, rows * widest);
    da16_ = w.alloc(opt_.precision, rows * widest);
    bgrad16_ = w.alloc(opt_.precision, widest);
    bias32_ = w.alloc<float>(widest);
  }
  host_x_.resize(rows * layout.widths.front());
  host_y_.resize(rows);
}

void Replica::start(Worker& w, std::span<const float> initial, std::size_t cap_bytes) {
  make_optimizer(w, cap_bytes, initial, nullptr);
}

void Replica::set_buckets(Worker& w, std::size_t cap_bytes) {
  const OptimizerState kept = optimizer_->state();
  make_optimizer(w, cap_bytes, {}, &kept);
}

void Replica::make_optimizer(Worker& w, std::size_t cap_bytes, std::span<const float> initial,
                             const OptimizerState* state) {
  release_all();
  optimizer_.reset();
  params_ = {};
  grads_ = {};
  // The buckets, in backward's order; the optimizer's slices are the same ranges in the flat
  // vector's order.
  const std::vector<BucketRange> ranges = plan_buckets(layout_, cap_bytes);
  buckets_.clear();
  std::vector<std::size_t> slices(ranges.size());
  layer_slice_.assign(layout_.layers(), 0);
  for (std::size_t b = 0; b < ranges.size(); ++b) {
    const std::size_t s = ranges.size() - 1 - b;
    buckets_.push_back({ranges[b], s});
    slices[s] = ranges[b].count;
    for (std::size_t l = ranges[b].first; l <= ranges[b].last; ++l) layer_slice_[l] = s;
  }
  const ShardedOptions o = sharded_options(opt_);
  const ShardLayout shape = ShardedOptimizer::layout_for(o, w.size(), slices);
  DeviceBuffer params = w.alloc(opt_.precision, shape.padded_size());
  w.fill(params, 0.0);
  if (w.rank() == 0 && !initial.empty()) {
    // Rank 0's values, placed in the padded layout and converted to the precision.
    std::vector<float> flat(shape.padded_size(), 0.0f);
    for (std::size_t s = 0; s < shape.slices(); ++s) {
      const std::size_t begin = ranges[ranges.size() - 1 - s].begin;
      std::copy_n(initial.begin() + static_cast<std::ptrdiff_t>(begin), shape.size(s),
                  flat.begin() + static_cast<std::ptrdiff_t>(shape.offset(s)));
    }
    auto staged = w.alloc<float>(flat.size());
    staged.write(std::span<const float>(flat));
    w.cast(staged, params);
  }
  optimizer_ = std::make_unique<ShardedOptimizer>(w, params, o, slices);
  if (state) optimizer_->load_state(*state);
  if (!stage_.parameters_sharded) params_ = std::move(params);
  grads_ = w.alloc(opt_.precision, shape.padded_size());
  w.fill(grads_, 0.0);
  gathered_.clear();
  gathered_.resize(shape.slices());
}

std::size_t Replica::padded(std::size_t i) const {
  // The layer's slice holds flat indices [begin, begin + count) at offset(slice).
  for (const Bucket& b : buckets_)
    if (i >= b.range.begin && i < b.range.begin + b.range.count)
      return optimizer_->layout().offset(b.slice) + (i - b.range.begin);
  throw Error(Errc::internal, "trainer: parameter " + std::to_string(i) + " is in no bucket");
}

DeviceBuffer Replica::weights(std::size_t l) {
  const std::size_t n = layout_.in(l)*layout_.out(l);
  if (!stage_.parameters_sharded) return params_.slice(padded(layout_.w_off[l]), n);
  const std::size_t s = layer_slice_[l];
  return gathered_[s].slice(padded(layout_.w_off[l]) - optimizer_->layout().offset(s), n);
}

DeviceBuffer Replica::biases(std::size_t l) {
  if (!stage_.parameters_sharded) return params_.slice(padded(layout_.b_off[l]), layout_.out(l));
  const std::size_t s = layer_slice_[l];
  return gathered_[s].slice(padded(layout_.b_off[l]) - optimizer_->layout().offset(s),
                            layout_.out(l));
}

DeviceBuffer Replica::grad_weights(std::size_t l) {
  return grads_.slice(padded(layout_.w_off[l]), layout_.in(l)*layout_.out(l));
}

DeviceBuffer Replica::grad_biases(std::size_t l) {
  return grads_.slice(padded(layout_.b_off[l]), layout_.out(l));
}

void Replica::need_layer(std::size_t l, int direction) {
  if (!stage_.parameters_sharded) return;
  const std::size_t s = layer_slice_[l];
  if (gathered_[s].empty()) {
    gathered_[s] = optimizer_->gather(s);
    // Release the slice passed (stage 3 keeps one or two gathered), prefetch the next.
    const std::size_t slices = gathered_.size();
    const std::size_t behind = direction > 0 ? s - 1 : s + 1;
    if (behind < slices && !gathered_[behind].empty()) {
      gathered_[behind] = {};
      optimizer_->release(behind);
    }
    const std::size_t ahead = direction > 0 ? s + 1 : s - 1;
    if (ahead < slices) optimizer_->prefetch(ahead);
  }
}

void Replica::release_all() {
  for (std::size_t s = 0; s < gathered_.size(); ++s) {
    if (gathered_[s].empty()) continue;
    gathered_[s] = {};
    optimizer_->release(s);
  }
}

DeviceBuffer Replica::as_compute(Worker& w, DeviceBuffer& x, DeviceBuffer& copy, std::size_t n) {
  if (!mixed_) return x.slice(0, n);
  DeviceBuffer from = x.slice(0, n), to = copy.slice(0, n);
  w.cast(from, to);
  return to;
}

void Replica::gemm(Worker& w, const Gemm& g, const DeviceBuffer& a, const DeviceBuffer& b,
                   DeviceBuffer& c, StepTimes& times) {
  if (!host_gemms_) return w.gemm(g, a, b, c);
  const auto t = Clock::now();
  w.gemm(g, a, b, c);
  times.gemm += since(t);
}

void Replica::forward(Worker& w, std::size_t rows, StepTimes& times) {
  const std::size_t L = layout_.layers();
  for (std::size_t l = 0; l < L; ++l) {
    need_layer(l, +1);
    const std::size_t in = layout_.in(l), out = layout_.out(l);
    DeviceBuffer x = as_compute(
        w, acts_[l], mixed_ ? acts16_[l] : static_cast<DeviceBuffer&>(acts_[l]), rows * in);
    DeviceBuffer wl = weights(l);
    DeviceBuffer y32 = acts_[l + 1].slice(0, rows * out);
    DeviceBuffer y = mixed_ ? z16_.slice(0, rows * out) : acts_[l + 1].slice(0, rows * out);
    gemm(w, {.m = rows, .n = out, .k = in}, x, wl, y, times);
    if (mixed_) w.cast(y, y32);
    DeviceBuffer b = biases(l);
    const float* bias = static_cast<const float*>(b.data());
    if (mixed_) {
      DeviceBuffer b32 = bias32_.slice(0, out);
      w.cast(b, b32);
      bias = static_cast<const float*>(b32.data());
    }
    float* act = acts_[l + 1].data();
    k_->bias_add(act, bias, rows, out);
    if (l + 1 < L) k_->relu(act, act, rows * out);
  }
  k_->softmax_xent_forward(acts_[L].data(), labels_.data(), probs_.data(), loss_.data(), rows,
                           layout_.widths.back());
}

void Replica::backward(Worker& w, std::size_t rows, bool first, bool last, StepTimes& times) {
  std::size_t next_bucket = 0;
  for (std::size_t l = layout_.layers(); l-- > 0;) {
    const std::size_t in = layout_.in(l), out = layout_.out(l);
    DeviceBuffer gw = grad_weights(l), gb = grad_biases(l);
    need_layer(l, -1);  // stage 3: every rank gathers alike, rows or none
    if (rows == 0) {
      // A worker with no rows (a batch smaller than the team) contributes zeros.
      if (first) {
        w.fill(gw, 0.0);
        w.fill(gb, 0.0);
      }
    } else {
      DeviceBuffer dz = as_compute(w, dz_, dz16_, rows * out);
      DeviceBuffer x = mixed_ ? acts16_[l].slice(0, rows * in) : acts_[l].slice(0, rows * in);
      // dW = a_l^T dz, added to the micro-batches' before it
      gemm(w,
           {.trans_a = Transpose::yes, .m = in, .n = out, .k = rows, .beta = first ? 0.0f : 1.0f},
           x, dz, gw, times);
      if (first && !mixed_) {
        k_->bias_grad(dz_.data(), static_cast<float*>(gb.data()), rows, out);
      } else {
        k_->bias_grad(dz_.data(), bgrad32_.data(), rows, out);
        DeviceBuffer b32 = bgrad32_.slice(0, out);
        if (first) {
          w.cast(b32, gb);
        } else if (!mixed_) {
          w.axpy(1.0f, b32, gb);
        } else {
          DeviceBuffer b16 = bgrad16_.slice(0, out);
          w.cast(b32, b16);
          w.axpy(1.0f, b16, gb);
        }
      }
      if (l > 0) {
        // da_l = dz W_l^T, then through the ReLU (a_l > 0 iff its input was)
        DeviceBuffer wl = weights(l);
        DeviceBuffer da = mixed_ ? da16_.slice(0, rows * in) : da_.slice(0, rows * in);
        gemm(w, {.trans_b = Transpose::yes, .m = rows, .n = in, .k = out}, dz, wl, da, times);
        if (mixed_) {
          DeviceBuffer da32 = da_.slice(0, rows * in);
          w.cast(da, da32);
        }
        k_->relu_grad(acts_[l].data(), da_.data(), dz_.data(), rows * in);
      }
    }
    const Bucket& b = buckets_[next_bucket];
    if (l == b.range.first) {
      // The bucket is complete: on the last micro-batch its reduction starts now, overlapping
      // the layers still to do.
      if (last) {
        DeviceBuffer g = grads_.slice(optimizer_->layout().offset(b.slice),
                                      optimizer_->layout().padded(b.slice));
        optimizer_->reduce(b.slice, g);
      }
      ++next_bucket;
    }
  }
}

std::vector<float> Replica::host_stats(std::size_t rows) {
  std::vector<float> out(kStatSlots, 0.0f);
  if (rows == 0) return out;
  const std::size_t classes = layout_.widths.back();
  std::vector<float> loss(rows), probs(rows * classes);
  loss_.read(std::span<float>(loss));
  probs_.read(std::span<float>(probs));
  double sum = 0;
  std::size_t correct = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    sum += loss[r];
    const float* p = probs.data() + r * classes;
    auto best = static_cast<std::int32_t>(std::max_element(p, p + classes) - p);
    if (best == host_y_[r]) ++correct;
  }
  out[kLossSum] = static_cast<float>(sum);
  out[kCorrect] = static_cast<float>(correct);
  out[kCount] = static_cast<float>(rows);
  return out;
}

std::vector<float> Replica::train_step(Worker& w, const Dataset& data,
                                       std::span<const std::size_t> rows_all, float lr,
                                       float stop_vote, float checkpoint_due, bool apply,
                                       StepTimes& times) {
  const Shard shard = w.shard(rows_all.size());
  const std::size_t in = layout_.widths.front();
  const auto micro = static_cast<std::size_t>(opt_.accumulate);
  // d(mean loss over the global batch)/d logits, times the loss scale: each rank scales by the
  // global size, so the sum over ranks and micro-batches is the gradient of the whole batch.
  const float scale = optimizer_->loss_scale() / static_cast<float>(rows_all.size());
  std::vector<float> stats(kStatSlots, 0.0f);
  for (std::size_t k = 0; k < micro; ++k) {
    // Micro-batch k: rows [k * count / micro, (k + 1) * count / micro) of this worker's shard.
    const std::size_t begin = shard.count * k / micro, end = shard.count * (k + 1) / micro;
    const std::size_t rows = end - begin;
    if (rows > micro_rows_) throw Error(Errc::internal, "trainer: a shard exceeds its buffers");
    auto t0 = Clock::now();
    data.fetch(rows_all.subspan(shard.begin + begin, rows), host_x_.data(), host_y_.data());
    acts_[0].write(std::span<const float>(host_x_.data(), rows * in));
    labels_.write(std::span<const std::int32_t>(host_y_.data(), rows));
    times.data += since(t0);
    auto t1 = Clock::now();
    if (rows > 0) {
      forward(w, rows, times);
      k_->softmax_xent_backward(probs_.data(), labels_.data(), dz_.data(), rows,
                                layout_.widths.back(), scale);
    } else {
      // No rows here (a batch smaller than the team): stage 3's gathers are collective, so
      // this rank takes part in the forward pass's as the others do.
      for (std::size_t l = 0; l < layout_.layers(); ++l) need_layer(l, +1);
    }
    backward(w, rows, k == 0, k + 1 == micro, times);
    times.compute += since(t1);
    const auto s = host_stats(rows);
    for (std::size_t i = 0; i < kStatSlots; ++i) stats[i] += s[i];
  }

  auto tw = Clock::now();
  optimizer_->wait_reductions();
  times.comm_wait += since(tw);
  auto tu = Clock::now();
  release_all();
  if (apply) {
    optimizer_->set_learning_rate(lr);
    optimizer_->step();
  } else {
    optimizer_->discard();
  }
  times.update += since(tu);

  auto ts = Clock::now();
  stats[kStopVotes] = stop_vote;
  stats[kCheckpointDue] = checkpoint_due;
  stats_.write(std::span<const float>(stats));
  w.all_reduce(stats_, ReduceOp::sum);
  stats_.read(std::span<float>(stats));
  times.stats += since(ts);
  return stats;
}

std::vector<float> Replica::evaluate(Worker& w, const Dataset& data) {
  const Shard shard = w.shard(data.size());
  const std::size_t in = layout_.widths.front();
  double loss = 0, correct = 0;
  std::vector<std::size_t> idx;
  const std::size_t chunk = std::max<std::size_t>(micro_rows_, 1);
  for (std::size_t done = 0; done < shard.count;) {
    std::size_t rows = std::min(chunk, shard.count - done);
    idx.resize(rows);
    for (std::size_t r = 0; r < rows; ++r) idx[r] = shard.begin + done + r;
    data.fetch(idx, host_x_.data(), host_y_.data());
    acts_[0].write(std::span<const float>(host_x_.data(), rows * in));
    labels_.write(std::span<const std::int32_t>(host_y_.data(), rows));
    StepTimes untimed;  // evaluation is not part of the profile's steps
    forward(w, rows, untimed);
    auto s = host_stats(rows);
    loss += s[kLossSum];
    correct += s[kCorrect];
    done += rows;
  }
  // Stage 3: every worker gathers as often as the one with the most chunks; a worker with
  // fewer rows (or none) runs the remaining gathers without computing.
  if (stage_.parameters_sharded) {
    std::vector<float> count = {static_cast<float>((shard.count + chunk - 1) / chunk)};
    Buffer<float> most = w.alloc<float>(1);
    most.write(std::span<const float>(count));
    w.all_reduce(most, ReduceOp::max);
    most.read(std::span<float>(count));
    for (auto c = static_cast<std::size_t>((shard.count + chunk - 1) / chunk);
         c < static_cast<std::size_t>(count[0]); ++c)
      for (std::size_t l = 0; l < layout_.layers(); ++l) need_layer(l, +1);
  }
  release_all();
  std::vector<float> out(kStatSlots, 0.0f);
  out[kLossSum] = static_cast<float>(loss);
  out[kCorrect] = static_cast<float>(correct);
  out[kCount] = static_cast<float>(shard.count);
  stats_.write(std::span<const float>(out));
  w.all_reduce(stats_, ReduceOp::sum);
  stats_.read(std::span<float>(out));
  return out;
}

OptimizerState Replica::state() {
  return optimizer_->state();
}

void Replica::load_state(const OptimizerState& state) {
  release_all();
  optimizer_->load_state(state);
}

std::size_t Replica::optimizer_states() const {
  return opt_.optimizer == Optimizer::adam ? 2 : 1;
}

}  // namespace nubo::train
