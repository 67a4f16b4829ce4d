// Worker's mixed-precision kernels and the fused optimiser update: checked here, run by the
// backend (DeviceBackend::cast, unscale_check, optimizer_step) on the worker's stream.
#include <string>

#include "nubo/error.hpp"
#include "nubo_plugin/math.hpp"
#include "parallel/team_state.hpp"
#include "parallel/worker_checks.hpp"

namespace nubo {
namespace {

using detail::check_buffer;
using detail::size_text;

using detail::bad_call;
using detail::check_float;

void check_f32(const DeviceBuffer& b, std::size_t n, const char* what, const char* name) {
  if (b.dtype() != DType::f32)
    bad_call(what, std::string(name) + " holds " + std::string(dtype_name(b.dtype())) +
                       "; it must be f32");
  if (b.size() != n)
    bad_call(what,
             std::string(name) + " holds " + size_text(b.size()) + " but master " + size_text(n));
}

math::OptimizerStep step_constants(const OptimizerUpdate& u) {
  if (u.kind != OptimizerKind::sgd && u.kind != OptimizerKind::adam &&
      u.kind != OptimizerKind::adamw)
    bad_call("optimizer_step",
             "unknown optimizer kind " + std::to_string(static_cast<int>(u.kind)));
  if (u.kind != OptimizerKind::sgd) {
    if (u.step < 1)
      bad_call("optimizer_step",
               "step must be >= 1 (Adam counts updates from 1), got " + std::to_string(u.step));
    if (!(u.beta1 >= 0.0f && u.beta1 < 1.0f) || !(u.beta2 >= 0.0f && u.beta2 < 1.0f))
      bad_call("optimizer_step", "beta1 and beta2 must be in [0, 1)");
  }
  const math::AdamStep adam = math::adam_step_constants(u.lr, u.beta1, u.beta2, u.eps,
                                                        u.weight_decay, u.step < 1 ? 1 : u.step);
  return {static_cast<std::int32_t>(u.kind), u.momentum, adam, u.grad_scale};
}

}  // namespace

void Worker::cast(const DeviceBuffer& in, DeviceBuffer& out) {
  auto held = state_->take();
  check_buffer(*state_, in, "cast", "in");
  check_buffer(*state_, out, "cast", "out");
  check_float(in, "cast", "in");
  check_float(out, "cast", "out");
  if (in.size() != out.size())
    bad_call("cast", "in holds " + size_text(in.size()) + " but out " + size_text(out.size()));
  if (detail::overlap(in, out) && in.data() != out.data())
    bad_call("cast", "in and out overlap without being the same buffer");
  if (in.data() == out.data() && in.dtype() != out.dtype())
    bad_call("cast", "in place only between buffers of one type");
  state_->backend->cast(in.dtype(), in.data(), out.dtype(), out.data(), in.size());
}

void Worker::unscale_check(DeviceBuffer& grads, float inv_scale, DeviceBuffer& stats) {
  auto held = state_->take();
  check_buffer(*state_, grads, "unscale_check", "grads");
  check_buffer(*state_, stats, "unscale_check", "stats");
  check_float(grads, "unscale_check", "grads");
  if (stats.dtype() != DType::f32 || stats.size() != 2)
    bad_call("unscale_check", "stats must hold 2 f32 (found-non-finite, sum of squares), not " +
                                  size_text(stats.size()) + " of " +
                                  std::string(dtype_name(stats.dtype())));
  if (detail::overlap(grads, stats)) bad_call("unscale_check", "stats overlaps grads");
  state_->backend->unscale_check(grads.dtype(), grads.data(), grads.size(), inv_scale,
                                 static_cast<float*>(stats.data()));
}

void Worker::optimizer_step(const OptimizerUpdate& update, DeviceBuffer& master,
                            const DeviceBuffer& grads, DeviceBuffer& m, DeviceBuffer& v,
                            DeviceBuffer* params) {
  auto held = state_->take();
  const char* what = "optimizer_step";
  const math::OptimizerStep step = step_constants(update);
  check_buffer(*state_, master, what, "master");
  check_buffer(*state_, grads, what, "grads");
  check_buffer(*state_, m, what, "m");
  const std::size_t n = master.size();
  check_f32(master, n, what, "master");
  check_f32(m, n, what, "m");
  check_float(grads, what, "grads");
  if (grads.size() != n)
    bad_call(what, "grads holds " + size_text(grads.size()) + " but master " + size_text(n));
  const bool adam = update.kind != OptimizerKind::sgd;
  if (adam) {
    check_buffer(*state_, v, what, "v");
    check_f32(v, n, what, "v");
  }
  if (params) {
    check_buffer(*state_, *params, what, "params");
    check_float(*params, what, "params");
    if (params->size() != n)
      bad_call(what, "params holds " + size_text(params->size()) + " but master " + size_text(n));
    if (detail::overlap(*params, master) && params->data() != master.data())
      bad_call(what, "params overlaps master without being the same buffer");
  }
  const bool own_copy = params && params->data() != master.data();
  state_->backend->optimizer_step(
      step, n, static_cast<float*>(master.data()), grads.dtype(), grads.data(),
      static_cast<float*>(m.data()), adam ? static_cast<float*>(v.data()) : nullptr,
      own_copy ? params->dtype() : DType::f32, own_copy ? params->data() : nullptr);
}

}  // namespace nubo
