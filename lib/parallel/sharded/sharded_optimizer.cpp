// ShardedOptimizer: the reductions (all-reduce or reduce-scatter, optionally through a 16-bit
// wire), the step (loss-scale check, clipping, the fused update of this rank's shard) and the
// publication of the updated parameters (all-gather, or stage 3's gather on demand). Everything
// runs through the public Worker API, so it works on every backend.
#include <algorithm>
#include <cmath>

#include "nubo/error.hpp"
#include "nubo/optimizer.hpp"
#include "parallel/sharded/sharded_impl.hpp"
#include "parallel/worker_checks.hpp"

namespace nubo {

namespace detail {
void sharded_refusal(const std::string& why) {
  throw Error(Errc::invalid_argument, "sharded optimizer: " + why);
}
}  // namespace detail

namespace {

using detail::size_text;

bool float_type(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

void check_options(const ShardedOptions& o) {
  if (!float_type(o.precision))
    detail::sharded_refusal("precision " + std::string(dtype_name(o.precision)) +
                            " is not supported (f32, bf16, f16)");
  if (!float_type(o.wire))
    detail::sharded_refusal("wire type " + std::string(dtype_name(o.wire)) +
                            " is not supported (f32, bf16, f16)");
  if (o.wire != DType::f32 && o.precision != DType::f32)
    detail::sharded_refusal("a compressed wire (" + std::string(dtype_name(o.wire)) +
                            ") needs f32 gradients; " + std::string(dtype_name(o.precision)) +
                            " gradients travel as they are");
  if (o.error_feedback && o.wire == DType::f32)
    detail::sharded_refusal("error feedback needs a compressed wire (wire bf16 or f16)");
  const auto k = o.optimizer;
  if (k != OptimizerKind::sgd && k != OptimizerKind::adam && k != OptimizerKind::adamw)
    detail::sharded_refusal("unknown optimizer kind " + std::to_string(static_cast<int>(k)));
  if (o.gradient_op != ReduceOp::avg && o.gradient_op != ReduceOp::sum)
    detail::sharded_refusal("gradient_op must be avg or sum");
  if (!(o.max_grad_norm >= 0.0f)) detail::sharded_refusal("max_grad_norm must be >= 0");
  const auto ls = o.loss_scaling;
  if (ls != LossScaling::automatic && ls != LossScaling::on && ls != LossScaling::off)
    detail::sharded_refusal("unknown loss scaling mode " + std::to_string(static_cast<int>(ls)));
  if (!(o.init_scale > 0.0f) || !(o.growth_factor >= 1.0f) || !(o.backoff_factor > 0.0f) ||
      !(o.backoff_factor <= 1.0f) || o.growth_interval < 1)
    detail::sharded_refusal(
        "loss scaling needs init_scale > 0, growth_factor >= 1, backoff_factor in (0, 1] and "
        "growth_interval >= 1");
}

bool scaling_on(const ShardedOptions& o) {
  if (o.loss_scaling == LossScaling::on) return true;
  if (o.loss_scaling == LossScaling::off) return false;
  return o.precision == DType::f16;
}

}  // namespace

ShardLayout ShardedOptimizer::layout_for(const ShardedOptions& options, int world,
                                         std::vector<std::size_t> slice_sizes) {
  if (world < 1) detail::sharded_refusal("world size " + std::to_string(world));
  const auto plan = StagePlan::of(options.stage, "sharded optimizer: stage");
  return ShardLayout(std::move(slice_sizes), plan.state_sharded ? world : 1);
}

ShardedOptimizer::Impl::Impl(Worker& worker, DeviceBuffer& params, const ShardedOptions& options,
                             std::vector<std::size_t> slice_sizes)
    : w(worker),
      o(options),
      plan(StagePlan::of(options.stage, "sharded optimizer: stage")),
      rank(worker.rank()),
      world(worker.size()) {
  check_options(o);
  if (slice_sizes.empty()) slice_sizes.push_back(params.size());
  layout = layout_for(o, world, std::move(slice_sizes));
  if (params.dtype() != o.precision)
    detail::sharded_refusal("params hold " + std::string(dtype_name(params.dtype())) +
                            " but the precision is " + std::string(dtype_name(o.precision)));
  if (params.size() != layout.padded_size())
    detail::sharded_refusal(
        "params hold " + size_text(params.size()) + " but the layout needs " +
        size_text(layout.padded_size()) + " (" + size_text(layout.parameters()) + " in " +
        std::to_string(layout.slices()) + " slice(s), padded: ShardedOptimizer::layout_for)");
  scaling = scaling_on(o);
  // Across processes on host links a reduce-scatter is an all-reduce of a staging copy and a
  // copy out; stage 1 keeps the whole gradient buffer anyway, so it all-reduces that in place
  // (the same sums, two copies fewer). NCCL reduce-scatters natively, at half the bytes.
  all_reduce_in_place = !plan.state_sharded || (!plan.gradients_sharded && o.wire == DType::f32 &&
                                                worker.device().backend != Backend::cuda);
  scale = scaling ? o.init_scale : 1.0f;
  reduced.assign(layout.slices(), false);
  whole_grads.resize(layout.slices());
  gathered.resize(layout.slices());
  gathering.resize(layout.slices());

  // Rank 0's parameters everywhere (a size that differs between ranks fails here, naming both).
  w.broadcast(params, 0);
  stats = w.alloc(DType::f32, 2);
  const std::size_t full = layout.padded_size(), shard = layout.shard_size();
  if (!plan.state_sharded) {
    params_view = params.slice(0, full);
    if (o.precision != DType::f32) {
      master = w.alloc(DType::f32, full);
      w.cast(params_view, master);
    }
  } else {
    master = w.alloc(DType::f32, shard);
    for (std::size_t i = 0; i < layout.slices(); ++i) {
      DeviceBuffer mine = own_part(params, i);
      DeviceBuffer dst = master.slice(layout.shard_offset(i), layout.shard(i));
      w.cast(mine, dst);
    }
    grad_shard = w.alloc(o.precision, shard);
    if (plan.parameters_sharded) {
      param_shard = w.alloc(o.precision, shard);
      for (std::size_t i = 0; i < layout.slices(); ++i) {
        DeviceBuffer mine = own_part(params, i);
        DeviceBuffer dst = param_shard.slice(layout.shard_offset(i), layout.shard(i));
        w.cast(mine, dst);
      }
    } else {
      params_view = params.slice(0, full);
    }
  }
  const std::size_t state_size = plan.state_sharded ? shard : full;
  m = w.alloc(DType::f32, state_size);
  w.fill(m, 0.0);
  if (o.optimizer != OptimizerKind::sgd) {
    v = w.alloc(DType::f32, state_size);
    w.fill(v, 0.0);
  }
  if (o.wire != DType::f32) {
    wire_full = w.alloc(o.wire, full);
    if (plan.state_sharded) wire_shard = w.alloc(o.wire, shard);
    if (o.error_feedback) {
      residual = w.alloc(DType::f32, full);
      w.fill(residual, 0.0);
    }
  }
}

DeviceBuffer ShardedOptimizer::Impl::own_part(DeviceBuffer& flat, std::size_t i) {
  return flat.slice(layout.offset(i) + static_cast<std::size_t>(rank) * layout.shard(i),
                    layout.shard(i));
}

DeviceBuffer ShardedOptimizer::Impl::master_of(std::size_t i) {
  if (!plan.state_sharded)
    return (master.empty() ? params_view : master).slice(layout.offset(i), layout.padded(i));
  return master.slice(layout.shard_offset(i), layout.shard(i));
}

DeviceBuffer ShardedOptimizer::Impl::state_of(DeviceBuffer& vec, std::size_t i) {
  if (vec.empty()) return {};
  return plan.state_sharded ? vec.slice(layout.shard_offset(i), layout.shard(i))
                            : vec.slice(layout.offset(i), layout.padded(i));
}

void ShardedOptimizer::Impl::check_slice(std::size_t i, const char* what) const {
  if (i >= layout.slices())
    detail::sharded_refusal(std::string(what) + " of slice " + std::to_string(i) + ": there are " +
                            std::to_string(layout.slices()) + " slice(s)");
}

void ShardedOptimizer::Impl::reduce(std::size_t i, DeviceBuffer& g) {
  check_slice(i, "reduce");
  if (reduced[i])
    detail::sharded_refusal("slice " + std::to_string(i) + " was reduced twice before step()");
  if (g.empty() && layout.padded(i) > 0)
    detail::sharded_refusal("reduce: the gradient buffer is empty");
  if (g.dtype() != o.precision)
    detail::sharded_refusal("gradients of " + std::string(dtype_name(g.dtype())) +
                            " for parameters of " + std::string(dtype_name(o.precision)));
  if (g.size() != layout.padded(i))
    detail::sharded_refusal("slice " + std::to_string(i) + "'s gradients hold " +
                            size_text(g.size()) + " but its parameters " +
                            size_text(layout.padded(i)) + " (padded)");
  const std::size_t n = layout.size(i), padded = layout.padded(i);
  if (padded > n) {
    DeviceBuffer tail = g.slice(n, padded - n);
    w.fill(tail, 0.0);
  }
  DeviceBuffer source = g.slice(0, padded);
  ReduceOp op = o.gradient_op;
  if (o.wire != DType::f32) {
    // PyTorch's compression hooks: divide first (so f16 does not overflow), convert, sum.
    DeviceBuffer residual_i;
    if (o.error_feedback) {
      residual_i = residual.slice(layout.offset(i), padded);
      w.axpy(1.0f, residual_i, source);
    }
    if (op == ReduceOp::avg) w.scale(source, 1.0f / static_cast<float>(world));
    DeviceBuffer packed = wire_full.slice(layout.offset(i), padded);
    w.cast(source, packed);
    if (o.error_feedback) {
      // residual = what was meant - what was sent
      w.cast(packed, residual_i);
      w.scale(residual_i, -1.0f);
      w.axpy(1.0f, source, residual_i);
    }
    op = ReduceOp::sum;
    source = std::move(packed);
  }
  if (all_reduce_in_place) {
    count_wire(source.bytes(), 2);
    whole_grads[i] = g.slice(0, padded);
    in_flight.push_back({w.all_reduce_async(source, op), i});
  } else {
    count_wire(source.bytes(), 1);
    DeviceBuffer dst = o.wire != DType::f32
                           ? wire_shard.slice(layout.shard_offset(i), layout.shard(i))
                           : grad_shard.slice(layout.shard_offset(i), layout.shard(i));
    in_flight.push_back({w.reduce_scatter_async(source, dst, op), i});
  }
  wire_sources.push_back(std::move(source));
  reduced[i] = true;
}

void ShardedOptimizer::Impl::finish_reductions() {
  for (InFlight& f : in_flight) {
    f.pending.wait();
    if (o.wire == DType::f32) continue;
    // Back from the wire into the f32 gradients the update reads.
    const std::size_t i = f.slice;
    if (!plan.state_sharded) {
      DeviceBuffer packed = wire_full.slice(layout.offset(i), layout.padded(i));
      w.cast(packed, whole_grads[i]);
    } else {
      DeviceBuffer packed = wire_shard.slice(layout.shard_offset(i), layout.shard(i));
      DeviceBuffer dst = grad_shard.slice(layout.shard_offset(i), layout.shard(i));
      w.cast(packed, dst);
    }
  }
  in_flight.clear();
  wire_sources.clear();
}

DeviceBuffer ShardedOptimizer::Impl::grads_of(std::size_t i) {
  if (!plan.state_sharded) return whole_grads[i].slice(0, layout.padded(i));
  if (all_reduce_in_place)
    return whole_grads[i].slice(static_cast<std::size_t>(rank) * layout.shard(i), layout.shard(i));
  return grad_shard.slice(layout.shard_offset(i), layout.shard(i));
}

void ShardedOptimizer::Impl::count_wire(std::size_t data_bytes, int passes) {
  bytes +=
      static_cast<std::uint64_t>(static_cast<double>(data_bytes) * passes * (world - 1) / world);
}

StepResult ShardedOptimizer::Impl::step() {
  for (std::size_t i = 0; i < layout.slices(); ++i)
    if (!reduced[i])
      detail::sharded_refusal("step: slice " + std::to_string(i) +
                              " was not reduced (reduce() each slice, or pass "
                              "the whole gradient buffer to step())");
  finish_reductions();
  std::fill(reduced.begin(), reduced.end(), false);

  StepResult r;
  const bool clip = o.max_grad_norm > 0.0f;
  bool finite = true;
  if (scaling || clip) {
    w.fill(stats, 0.0);
    for (std::size_t i = 0; i < layout.slices(); ++i) {
      DeviceBuffer g = grads_of(i);
      w.unscale_check(g, scaling ? 1.0f / scale : 1.0f, stats);
    }
    // Each rank checked its shard; one reduction decides for the team. Stage 0's ranks hold
    // the same reduced gradients, so they decide alike without it.
    if (plan.state_sharded) {
      count_wire(stats.bytes(), 2);
      w.all_reduce(stats, ReduceOp::sum);
    }
    float host[2] = {0, 0};
    stats.read(host, sizeof host);
    finite = host[0] == 0.0f && std::isfinite(host[1]);
    r.grad_norm = std::sqrt(static_cast<double>(host[1]));
  }
  if (!finite) {
    scale *= o.backoff_factor;
    clean_steps = 0;
    r.loss_scale = scale;
    for (auto& g : whole_grads) g = {};
    return r;
  }
  // Stage 3: what was gathered (or is being) holds the parameters before this update.
  for (std::size_t i = 0; i < gathering.size(); ++i) {
    gathering[i].wait();
    gathered[i] = {};
  }
  ++steps;
  OptimizerUpdate u;
  u.kind = o.optimizer;
  u.lr = o.lr;
  u.momentum = o.momentum;
  u.beta1 = o.beta1;
  u.beta2 = o.beta2;
  u.eps = o.eps;
  u.weight_decay = o.weight_decay;
  u.step = static_cast<std::int64_t>(steps);
  u.grad_scale =
      clip ? static_cast<float>(std::min(1.0, o.max_grad_norm / (r.grad_norm + 1e-6))) : 1.0f;
  std::vector<Pending> gathers;
  for (std::size_t i = 0; i < layout.slices(); ++i) {
    DeviceBuffer mast = master_of(i), g = grads_of(i), mi = state_of(m, i), vi = state_of(v, i);
    if (!plan.state_sharded) {
      DeviceBuffer p = params_view.slice(layout.offset(i), layout.padded(i));
      w.optimizer_step(u, mast, g, mi, vi, master.empty() ? nullptr : &p);
    } else if (plan.parameters_sharded) {
      DeviceBuffer p = param_shard.slice(layout.shard_offset(i), layout.shard(i));
      w.optimizer_step(u, mast, g, mi, vi, &p);
    } else {
      // The gradient shard (spent, or unused when the gradients were all-reduced in place)
      // receives the new parameters, which the all-gather spreads into every rank's buffer.
      DeviceBuffer out = grad_shard.slice(layout.shard_offset(i), layout.shard(i));
      w.optimizer_step(u, mast, g, mi, vi, &out);
      DeviceBuffer all = params_view.slice(layout.offset(i), layout.padded(i));
      count_wire(all.bytes(), 1);
      gathers.push_back(w.all_gather_async(out, all));
    }
  }
  for (Pending& p : gathers) p.wait();
  for (auto& g : whole_grads) g = {};
  if (scaling && ++clean_steps >= o.growth_interval) {
    scale *= o.growth_factor;
    clean_steps = 0;
  }
  r.applied = true;
  r.loss_scale = scale;
  return r;
}

void ShardedOptimizer::Impl::check_stage3(std::size_t i, const char* what) const {
  if (!plan.parameters_sharded)
    detail::sharded_refusal(
        std::string(what) + ": only stage 3 gathers parameters (this optimizer is stage " +
        std::to_string(o.stage) + ", whose parameters are whole on every worker)");
  check_slice(i, what);
}

void ShardedOptimizer::Impl::prefetch(std::size_t i) {
  check_stage3(i, "prefetch");
  if (!gathered[i].empty()) return;
  gathered[i] = w.alloc(o.precision, layout.padded(i));
  DeviceBuffer mine = param_shard.slice(layout.shard_offset(i), layout.shard(i));
  count_wire(gathered[i].bytes(), 1);
  gathering[i] = w.all_gather_async(mine, gathered[i]);
}

DeviceBuffer ShardedOptimizer::Impl::gather(std::size_t i) {
  check_stage3(i, "gather");
  prefetch(i);
  gathering[i].wait();
  return gathered[i].slice(0, layout.size(i));
}

void ShardedOptimizer::Impl::release(std::size_t i) {
  check_stage3(i, "release");
  gathering[i].wait();
  gathered[i] = {};
}

// --- The public face -------------------------------------------------------------------------

ShardedOptimizer::ShardedOptimizer(Worker& w, DeviceBuffer& params, const ShardedOptions& options,
                                   std::vector<std::size_t> slice_sizes)
    : impl_(std::make_unique<Impl>(w, params, options, std::move(slice_sizes))) {}
ShardedOptimizer::~ShardedOptimizer() = default;
ShardedOptimizer::ShardedOptimizer(ShardedOptimizer&&) noexcept = default;
ShardedOptimizer& ShardedOptimizer::operator=(ShardedOptimizer&&) noexcept = default;

const ShardLayout& ShardedOptimizer::layout() const {
  return impl_->layout;
}
const ShardedOptions& ShardedOptimizer::options() const {
  return impl_->o;
}
float ShardedOptimizer::loss_scale() const {
  return impl_->scale;
}
std::uint64_t ShardedOptimizer::steps() const {
  return impl_->steps;
}
std::uint64_t ShardedOptimizer::bytes_communicated() const {
  return impl_->bytes;
}

void ShardedOptimizer::reduce(std::size_t slice, DeviceBuffer& grads) {
  impl_->reduce(slice, grads);
}

StepResult ShardedOptimizer::step(DeviceBuffer& grads) {
  Impl& s = *impl_;
  if (grads.size() != s.layout.padded_size() || grads.dtype() != s.o.precision)
    detail::sharded_refusal("step: the gradients hold " + size_text(grads.size()) + " of " +
                            std::string(dtype_name(grads.dtype())) + " but the parameters " +
                            size_text(s.layout.padded_size()) + " of " +
                            std::string(dtype_name(s.o.precision)));
  for (std::size_t i = 0; i < s.layout.slices(); ++i) {
    if (s.reduced[i]) continue;
    DeviceBuffer g = grads.slice(s.layout.offset(i), s.layout.padded(i));
    s.reduce(i, g);
  }
  return s.step();
}

StepResult ShardedOptimizer::step() {
  return impl_->step();
}

void ShardedOptimizer::wait_reductions() {
  impl_->finish_reductions();
}

void ShardedOptimizer::discard() {
  Impl& s = *impl_;
  s.finish_reductions();
  std::fill(s.reduced.begin(), s.reduced.end(), false);
  for (auto& g : s.whole_grads) g = {};
}

void ShardedOptimizer::set_learning_rate(float lr) {
  if (!(lr >= 0.0f))
    detail::sharded_refusal("learning rate " + std::to_string(lr) + " (must be >= 0)");
  impl_->o.lr = lr;
}

float ShardedOptimizer::learning_rate() const {
  return impl_->o.lr;
}

DeviceBuffer ShardedOptimizer::gather(std::size_t slice) {
  return impl_->gather(slice);
}
void ShardedOptimizer::prefetch(std::size_t slice) {
  impl_->prefetch(slice);
}
void ShardedOptimizer::release(std::size_t slice) {
  impl_->release(slice);
}

}  // namespace nubo
