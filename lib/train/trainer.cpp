// DataParallelTrainer: construction, steps, fit and evaluation. Checkpoints are in
// checkpoint.cpp, bucket autotuning in autotune.cpp, the profile in profile.cpp.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "common/env.hpp"
#include "common/log.hpp"
#include "nubo/error.hpp"
#include "train/trainer_impl.hpp"

namespace nubo {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void check_options(const TrainerOptions& o, const Dataset* data) {
  auto bad = [](const std::string& m) { throw Error(Errc::invalid_argument, "trainer: " + m); };
  if (!data) bad("no training data");
  if (data->size() == 0) bad("the training data '" + data->name() + "' has no rows");
  if (o.layers.size() >= 2 && o.layers.front() != data->features())
    bad("the first layer has width " + std::to_string(o.layers.front()) + " but '" + data->name() +
        "' has " + std::to_string(data->features()) + " features per row");
  if (o.layers.size() >= 2 && o.layers.back() < data->classes())
    bad("the last layer has width " + std::to_string(o.layers.back()) + " but '" + data->name() +
        "' has " + std::to_string(data->classes()) + " classes");
  if (o.global_batch == 0 || o.global_batch > (1u << 20))
    bad("global_batch " + std::to_string(o.global_batch) + " must lie in 1 .. 1048576");
  if (!(o.lr > 0) || !std::isfinite(o.lr)) bad("the learning rate must be positive");
  if (!(o.momentum >= 0 && o.momentum < 1)) bad("momentum must lie in [0, 1)");
  if (!(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) || !(o.eps > 0))
    bad("Adam needs beta1, beta2 in [0, 1) and eps > 0");
  if (!(o.weight_decay >= 0)) bad("weight_decay must not be negative");
  StagePlan::of(o.zero_stage, "trainer: zero_stage");
  if (o.precision != DType::f32 && o.precision != DType::bf16 && o.precision != DType::f16)
    bad("precision " + std::string(dtype_name(o.precision)) + " (f32, bf16 or f16)");
  if (o.grad_compression != DType::f32 && o.grad_compression != DType::bf16 &&
      o.grad_compression != DType::f16)
    bad("gradient compression " + std::string(dtype_name(o.grad_compression)) +
        " (bf16, f16, or f32 for none)");
  if (o.grad_compression != DType::f32 && o.precision != DType::f32)
    bad("gradient compression is for f32 gradients; " + std::string(dtype_name(o.precision)) +
        " gradients already travel in 16 bits");
  if (o.error_feedback && o.grad_compression == DType::f32)
    bad("error_feedback needs gradient compression (bf16 or f16)");
  if (o.accumulate < 1 || o.accumulate > 4096)
    bad("accumulate " + std::to_string(o.accumulate) + " (micro-batches per step, 1 to 4096)");
  if (!(o.max_grad_norm >= 0) || !std::isfinite(o.max_grad_norm))
    bad("max_grad_norm must be 0 (no clipping) or positive");
  if (o.checkpoint_seconds < 0) bad("checkpoint_seconds must not be negative");
  if (o.checkpoint_keep < 1) bad("checkpoint_keep must be at least 1");
  if (o.checkpoint_auto) {
    if (o.checkpoint_dir.empty()) bad("checkpoint_auto needs a checkpoint_dir");
    if (!(o.mtbi_s > 0) || !std::isfinite(o.mtbi_s))
      bad("checkpoint_auto needs mtbi_s, the mean time between interruptions, above 0");
    if (o.checkpoint_every > 0 || o.checkpoint_seconds > 0)
      bad("checkpoint_auto chooses the interval: leave checkpoint_every and checkpoint_seconds 0");
  }
}

// PyTorch's nn.Linear default: U(-1/sqrt(in), 1/sqrt(in)) for weights and biases, from its own
// generator so the data order does not depend on the model size.
std::vector<float> initial_parameters(const train::Layout& layout, std::uint64_t seed) {
  std::mt19937_64 gen(seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<float> p(layout.total);
  for (std::size_t l = 0; l < layout.layers(); ++l) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(layout.in(l)));
    const std::size_t end = layout.b_off[l] + layout.out(l);
    for (std::size_t i = layout.w_off[l]; i < end; ++i) {
      float u = static_cast<float>(gen() >> 40) / static_cast<float>(1u << 24);  // [0, 1)
      p[i] = (2.0f * u - 1.0f) * bound;
    }
  }
  return p;
}

}  // namespace

DataParallelTrainer::Impl::Impl(Team& t, const TrainerOptions& o, std::shared_ptr<const Dataset> d)
    : team(t),
      opt(o),
      train((check_options(o, d.get()), std::move(d))),
      layout(o.layers),
      rng(o.seed) {
  max_rows = (opt.global_batch + static_cast<std::size_t>(team.size()) - 1) /
             static_cast<std::size_t>(team.size());
  bucket_bytes = opt.bucket_bytes;
  replicas.resize(static_cast<std::size_t>(team.local_size()));
  std::vector<float> init;
  team.run([&](Worker& w) {
    auto r = std::make_unique<train::Replica>(w, layout, opt, max_rows);
    // Only rank 0 draws; the broadcast is what makes every replica start equal.
    std::vector<float> mine;
    if (w.rank() == 0) mine = initial_parameters(layout, opt.seed);
    r->start(w, mine, bucket_bytes);
    replicas[static_cast<std::size_t>(w.local_rank())] = std::move(r);
  });
}

std::uint64_t DataParallelTrainer::Impl::steps_per_epoch() const {
  return (train->size() + opt.global_batch - 1) / opt.global_batch;
}

// Fisher-Yates with the raw engine output, so the order is the same on every platform (the
// standard distributions are implementation-defined).
void DataParallelTrainer::Impl::start_epoch(int e) {
  std::ostringstream s;
  s << rng;
  epoch_rng_state = s.str();
  order.resize(train->size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  epoch = e;
  position = 0;
}

void DataParallelTrainer::Impl::restore_epoch(int e, const std::mt19937_64& state,
                                              std::size_t pos) {
  rng = state;
  start_epoch(e);
  position = pos;
}

std::vector<float> DataParallelTrainer::Impl::run_step(float stop_vote, bool checkpoint_due) {
  if (epoch < 0 || position >= order.size()) start_epoch(epoch + 1);
  const std::size_t n = std::min(opt.global_batch, order.size() - position);
  std::span<const std::size_t> rows(order.data() + position, n);
  float lr = opt.lr;
  if (opt.lr_decay_steps > 0) {
    double progress =
        std::min(1.0, static_cast<double>(step) / static_cast<double>(opt.lr_decay_steps));
    lr = static_cast<float>(0.5 * opt.lr * (1.0 + std::cos(3.14159265358979323846 * progress)));
  }
  std::vector<float> result;
  train::StepTimes t;
  auto t0 = Clock::now();
  team.run([&](Worker& w) {
    train::StepTimes mine;
    auto& r = *replicas[static_cast<std::size_t>(w.local_rank())];
    auto s = r.train_step(w, *train, rows, lr, w.local_rank() == 0 ? stop_vote : 0.0f,
                          w.rank() == 0 && checkpoint_due ? 1.0f : 0.0f, true, mine);
    if (w.local_rank() == 0) {
      result = std::move(s);
      t = mine;
    }
  });
  wall_s += since(t0);
  times.data += t.data;
  times.compute += t.compute;
  times.comm_wait += t.comm_wait;
  times.update += t.update;
  times.stats += t.stats;
  times.gemm += t.gemm;
  ++measured_steps;
  measured_samples += n;
  position += n;
  ++step;
  return result;
}

void DataParallelTrainer::Impl::apply_bucket_bytes(std::size_t bytes) {
  bucket_bytes = bytes;
  team.run([&](Worker& w) {
    replicas[static_cast<std::size_t>(w.local_rank())]->set_buckets(w, bytes);
  });
}

DataParallelTrainer::DataParallelTrainer(Team& team, const TrainerOptions& options,
                                         std::shared_ptr<const Dataset> train)
    : impl_(std::make_unique<Impl>(team, options, std::move(train))) {
  if (options.autotune && env::autotune_enabled()) impl_->autotune();
  if (!options.checkpoint_dir.empty() && !options.fresh) impl_->resumed_from = resume_latest();
  if (!options.checkpoint_dir.empty() && options.fresh) impl_->set_aside_earlier_run();
}

const std::string& DataParallelTrainer::resumed_from() const {
  return impl_->resumed_from;
}

DataParallelTrainer::~DataParallelTrainer() {
  // fit() waits for its writes; one left in flight here was abandoned by an exception.
  try {
    impl_->finish_background_write();
  } catch (const std::exception& e) {
    log::warn(std::string("a checkpoint written in the background failed: ") + e.what());
  }
}

StepStats DataParallelTrainer::step() {
  auto s = impl_->run_step(0.0f, false);
  StepStats out;
  out.samples = static_cast<std::size_t>(s[train::kCount]);
  out.loss = out.samples ? s[train::kLossSum] / s[train::kCount] : 0.0;
  out.accuracy = out.samples ? s[train::kCorrect] / s[train::kCount] : 0.0;
  return out;
}

FitResult DataParallelTrainer::fit(int epochs, const TrainProgressFn& progress) {
  if (epochs < 0) throw Error(Errc::invalid_argument, "fit: epochs must not be negative");
  Impl& m = *impl_;
  const bool checkpointing = !m.opt.checkpoint_dir.empty();
  const auto spe = m.steps_per_epoch();
  const std::uint64_t total = static_cast<std::uint64_t>(epochs) * spe;
  if (m.step > total)
    throw Error(Errc::invalid_argument,
                "fit: the run resumed at step " + std::to_string(m.step) + ", past the " +
                    std::to_string(total) + " steps of " + std::to_string(epochs) +
                    (epochs == 1 ? " epoch" : " epochs") + ": give more epochs, or start afresh");
  const std::uint64_t first = m.step;
  auto t0 = Clock::now();
  m.last_checkpoint = t0;
  while (m.step < total) {
    m.reap_background_write();  // a write that ended gives its delta to the plan at once
    const double interval = m.checkpoint_interval_s();
    bool time_due = checkpointing && interval > 0 && since(m.last_checkpoint) >= interval;
    // Auto, before any delta is known: a checkpoint after the first step measures one.
    if (m.opt.checkpoint_auto && interval == 0 && m.taken == 0) time_due = true;
    auto s = m.run_step(m.stop.load() ? 1.0f : 0.0f, time_due);
    TrainProgress p;
    p.epoch = m.epoch;
    p.epochs = epochs;
    p.step = m.step;
    p.steps_per_epoch = spe;
    p.total_steps = total;
    p.checkpoint_interval_s = m.checkpoint_interval_s();
    p.loss = s[train::kCount] > 0 ? s[train::kLossSum] / s[train::kCount] : 0.0;
    p.accuracy = s[train::kCount] > 0 ? s[train::kCorrect] / s[train::kCount] : 0.0;
    p.elapsed_s = since(t0);
    const double done = static_cast<double>(m.step - first);
    p.samples_per_s =
        p.elapsed_s > 0 ? done * static_cast<double>(m.opt.global_batch) / p.elapsed_s : 0;
    if (done > 0) p.eta_s = p.elapsed_s / done * static_cast<double>(total - m.step);
    // Every rank reaches the same decisions: the stop votes and rank 0's clock travel in the
    // step's all-reduce; a single process may also act on its own flag at once.
    bool stopping = s[train::kStopVotes] > 0 || (m.single_process() && m.stop.load());
    bool due =
        checkpointing && ((m.opt.checkpoint_every > 0 && m.step % m.opt.checkpoint_every == 0) ||
                          s[train::kCheckpointDue] > 0 || stopping || m.step == total);
    if (due) {
      // The last one is written before fit() returns; a stop's too, after the one in flight.
      if (stopping || m.step == total) {
        save(checkpoint_path(m.step));
      } else {
        const auto c0 = Clock::now();
        if (m.opt.async_checkpoints)
          m.save_in_background(checkpoint_path(m.step));
        else
          save(checkpoint_path(m.step));
        m.stall_s += since(c0);
        ++m.stalls;
      }
      p.checkpointed = true;
    }
    // A stop request is honoured once: the flag is cleared on the way out, so a later fit()
    // continues the run.
    if (progress && !progress(p)) {
      m.stop = true;
      if (m.single_process()) {
        if (checkpointing && !due) save(checkpoint_path(m.step));
        m.finish_background_write();
        m.stop = false;
        return FitResult::stopped;
      }
    }
    if (stopping) {
      m.finish_background_write();
      m.stop = false;
      return FitResult::stopped;
    }
  }
  m.finish_background_write();
  return FitResult::finished;
}

Evaluation DataParallelTrainer::evaluate(const Dataset& data) {
  Impl& m = *impl_;
  if (data.features() != m.layout.widths.front())
    throw Error(Errc::invalid_argument, "evaluate: '" + data.name() + "' has " +
                                            std::to_string(data.features()) +
                                            " features per row; the model takes " +
                                            std::to_string(m.layout.widths.front()));
  if (data.classes() > m.layout.widths.back())
    throw Error(Errc::invalid_argument,
                "evaluate: '" + data.name() + "' has more classes than the model's outputs");
  std::vector<float> s;
  m.team.run([&](Worker& w) {
    auto r = m.replicas[static_cast<std::size_t>(w.local_rank())]->evaluate(w, data);
    if (w.local_rank() == 0) s = std::move(r);
  });
  Evaluation e;
  e.samples = static_cast<std::size_t>(s[train::kCount]);
  if (e.samples > 0) {
    e.loss = s[train::kLossSum] / s[train::kCount];
    e.accuracy = s[train::kCorrect] / s[train::kCount];
  }
  return e;
}

std::uint64_t DataParallelTrainer::steps_done() const {
  return impl_->step;
}
int DataParallelTrainer::epoch() const {
  return std::max(impl_->epoch, 0);
}
std::uint64_t DataParallelTrainer::steps_per_epoch() const {
  return impl_->steps_per_epoch();
}
std::size_t DataParallelTrainer::parameter_count() const {
  return impl_->layout.total;
}
std::size_t DataParallelTrainer::bucket_bytes() const {
  return impl_->bucket_bytes;
}
std::size_t DataParallelTrainer::bucket_count() const {
  return impl_->replicas.at(0)->bucket_count();
}
std::vector<float> DataParallelTrainer::parameters() const {
  return impl_->gather_state().master;
}
std::string DataParallelTrainer::autotune_result() const {
  return impl_->autotune_outcome;
}
void DataParallelTrainer::request_stop() noexcept {
  impl_->stop.store(true);
}

}  // namespace nubo
