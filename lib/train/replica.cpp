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

Replica::Replica(Worker& w, const Layout& layout, const TrainerOptions& options,
                 std::size_t max_rows)
    : k_(kernels_for(w)),
      layout_(layout),
      opt_(options),
      max_rows_(max_rows),
      rank_(w.rank()),
      host_gemms_(w.device().backend != Backend::cuda) {
  params_ = w.alloc<float>(layout.total);
  state1_ = w.alloc<float>(layout.total);
  w.fill(state1_, 0.0);
  if (opt_.optimizer == Optimizer::adam) {
    state2_ = w.alloc<float>(layout.total);
    w.fill(state2_, 0.0);
  }
  std::size_t widest = *std::max_element(layout.widths.begin(), layout.widths.end());
  for (std::size_t width : layout.widths) acts_.push_back(w.alloc<float>(max_rows * width));
  dz_ = w.alloc<float>(max_rows * widest);
  da_ = w.alloc<float>(max_rows * widest);
  probs_ = w.alloc<float>(max_rows * layout.widths.back());
  loss_ = w.alloc<float>(max_rows);
  labels_ = w.alloc<std::int32_t>(max_rows);
  stats_ = w.alloc<float>(kStatSlots);
  host_x_.resize(max_rows * layout.widths.front());
  host_y_.resize(max_rows);
  set_buckets(w, options.bucket_bytes);
}

void Replica::broadcast_parameters(Worker& w, std::span<const float> initial) {
  if (w.rank() == 0) params_.write(initial);
  w.broadcast(params_, 0);
}

void Replica::set_buckets(Worker& w, std::size_t cap_bytes) {
  buckets_.clear();
  for (const BucketRange& r : plan_buckets(layout_, cap_bytes))
    buckets_.push_back({r, w.alloc<float>(r.count)});
}

Buffer<float> Replica::weights(Buffer<float>& flat, std::size_t l) {
  return flat.slice(layout_.w_off[l], layout_.in(l)*layout_.out(l));
}

Buffer<float> Replica::biases(Buffer<float>& flat, std::size_t l) {
  return flat.slice(layout_.b_off[l], layout_.out(l));
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
    Buffer<float> wl = weights(params_, l);
    gemm(w, {.m = rows, .n = layout_.out(l), .k = layout_.in(l)}, acts_[l], wl, acts_[l + 1],
         times);
    float* y = acts_[l + 1].data();
    k_->bias_add(y, biases(params_, l).data(), rows, layout_.out(l));
    if (l + 1 < L) k_->relu(y, y, rows * layout_.out(l));
  }
  k_->softmax_xent_forward(acts_[L].data(), labels_.data(), probs_.data(), loss_.data(), rows,
                           layout_.widths.back());
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
                                       std::span<const std::size_t> rows_all,
                                       std::int64_t adam_step, float lr, float stop_vote,
                                       float checkpoint_due, bool apply, StepTimes& times) {
  auto t0 = Clock::now();
  const Shard shard = w.shard(rows_all.size());
  const std::size_t rows = shard.count;
  if (rows > max_rows_) throw Error(Errc::internal, "trainer: a shard exceeds its buffers");
  const std::size_t in = layout_.widths.front();
  data.fetch(rows_all.subspan(shard.begin, rows), host_x_.data(), host_y_.data());
  acts_[0].write(std::span<const float>(host_x_.data(), rows * in));
  labels_.write(std::span<const std::int32_t>(host_y_.data(), rows));
  times.data += since(t0);

  auto t1 = Clock::now();
  const std::size_t L = layout_.layers();
  std::vector<Pending> pending;
  pending.reserve(buckets_.size());
  std::size_t next_bucket = 0;
  if (rows > 0) {
    forward(w, rows, times);
    // d(mean loss over the global batch)/d logits: each rank scales by the global size, so the
    // all-reduce sum is the gradient of the whole batch.
    k_->softmax_xent_backward(probs_.data(), labels_.data(), dz_.data(), rows,
                              layout_.widths.back(), 1.0f / static_cast<float>(rows_all.size()));
  }
  for (std::size_t l = L; l-- > 0;) {
    Bucket& b = buckets_[next_bucket];
    // Layer l's gradient, weights then biases, is one range of the bucket.
    Buffer<float> grad = b.grad.slice(layout_.w_off[l] - b.range.begin,
                                      layout_.in(l)*layout_.out(l) + layout_.out(l));
    if (rows == 0) {
      // A worker with no rows this step (a batch smaller than the team) contributes zeros.
      w.fill(grad, 0.0);
    } else {
      Buffer<float> dw = grad.slice(0, layout_.in(l)*layout_.out(l));
      // dW = a_l^T dz
      gemm(w, {.trans_a = Transpose::yes, .m = layout_.in(l), .n = layout_.out(l), .k = rows},
           acts_[l], dz_, dw, times);
      k_->bias_grad(dz_.data(), grad.data() + (layout_.b_off[l] - layout_.w_off[l]), rows,
                    layout_.out(l));
      if (l > 0) {
        // da_l = dz W_l^T, then through the ReLU (a_l > 0 iff its input was)
        Buffer<float> wl = weights(params_, l);
        gemm(w, {.trans_b = Transpose::yes, .m = rows, .n = layout_.in(l), .k = layout_.out(l)},
             dz_, wl, da_, times);
        k_->relu_grad(acts_[l].data(), da_.data(), dz_.data(), rows * layout_.in(l));
      }
    }
    if (l == b.range.first) {
      // The bucket is complete: start its all-reduce now, overlapping the layers still to do.
      pending.push_back(w.all_reduce_async(b.grad, ReduceOp::sum));
      ++next_bucket;
    }
  }
  times.compute += since(t1);

  for (std::size_t i = 0; i < pending.size(); ++i) {
    auto tw = Clock::now();
    pending[i].wait();
    times.comm_wait += since(tw);
    if (!apply) continue;
    auto tu = Clock::now();
    const Bucket& b = buckets_[i];
    float* wp = params_.data() + b.range.begin;
    if (opt_.optimizer == Optimizer::sgd) {
      SgdParams p{lr, opt_.momentum, opt_.weight_decay};
      k_->sgd_momentum(wp, b.grad.data(), state1_.data() + b.range.begin, b.range.count, p);
    } else {
      AdamParams p{lr, opt_.beta1, opt_.beta2, opt_.eps, opt_.weight_decay, adam_step};
      k_->adam(wp, b.grad.data(), state1_.data() + b.range.begin, state2_.data() + b.range.begin,
               b.range.count, p);
    }
    times.update += since(tu);
  }

  auto ts = Clock::now();
  std::vector<float> stats = host_stats(rows);
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
  for (std::size_t done = 0; done < shard.count;) {
    std::size_t rows = std::min(max_rows_, shard.count - done);
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
  std::vector<float> out(kStatSlots, 0.0f);
  out[kLossSum] = static_cast<float>(loss);
  out[kCorrect] = static_cast<float>(correct);
  out[kCount] = static_cast<float>(shard.count);
  stats_.write(std::span<const float>(out));
  w.all_reduce(stats_, ReduceOp::sum);
  stats_.read(std::span<float>(out));
  return out;
}

std::vector<float> Replica::read(int which) const {
  const Buffer<float>& b = which == 0 ? params_ : which == 1 ? state1_ : state2_;
  return b.to_vector();
}

void Replica::read(int which, std::span<float> out) const {
  const Buffer<float>& b = which == 0 ? params_ : which == 1 ? state1_ : state2_;
  b.read(out);
}

void Replica::write(int which, std::span<const float> values) {
  Buffer<float>& b = which == 0 ? params_ : which == 1 ? state1_ : state2_;
  b.write(values);
}

std::size_t Replica::optimizer_states() const {
  return opt_.optimizer == Optimizer::adam ? 2 : 1;
}

}  // namespace nubo::train
