// The sharded optimizer and the mixed-precision kernels in C (nubo_optimizer.h).
#include <vector>

#include "generated/options.hpp"
#include "generated/results.hpp"
#include "nubo/optimizer.hpp"
#include "nubo_optimizer.h"
#include "parallel_handles.hpp"
#include "sized_struct.hpp"

namespace nubo::capi {
namespace {

nubo::ShardedOptimizer& require_optimizer(nubo_sharded_optimizer* o) {
  return *reinterpret_cast<nubo::ShardedOptimizer*>(require(o, "optimizer"));
}
const nubo::ShardedOptimizer& require_optimizer(const nubo_sharded_optimizer* o) {
  return *reinterpret_cast<const nubo::ShardedOptimizer*>(require(o, "optimizer"));
}

std::vector<std::size_t> slices_of(const size_t* sizes, size_t count) {
  if (count > 0) require(sizes, "slice_sizes");
  return count == 0 ? std::vector<std::size_t>{} : std::vector<std::size_t>(sizes, sizes + count);
}

nubo_optimizer_update default_update() {
  const nubo::OptimizerUpdate d;
  nubo_optimizer_update u{};
  u.struct_size = sizeof u;
  u.kind = static_cast<nubo_update_rule>(d.kind);
  u.lr = d.lr;
  u.momentum = d.momentum;
  u.beta1 = d.beta1;
  u.beta2 = d.beta2;
  u.eps = d.eps;
  u.weight_decay = d.weight_decay;
  u.step = d.step;
  u.grad_scale = d.grad_scale;
  return u;
}

nubo::OptimizerUpdate read_update(const nubo_optimizer_update& in) {
  const nubo_optimizer_update c =
      read_sized(in, default_update(), "update", "nubo_optimizer_update_init");
  nubo::OptimizerUpdate u;
  u.kind = static_cast<nubo::OptimizerKind>(c.kind);
  u.lr = c.lr;
  u.momentum = c.momentum;
  u.beta1 = c.beta1;
  u.beta2 = c.beta2;
  u.eps = c.eps;
  u.weight_decay = c.weight_decay;
  u.step = c.step;
  u.grad_scale = c.grad_scale;
  return u;
}

}  // namespace
}  // namespace nubo::capi

using namespace nubo::capi;

extern "C" {

NUBO_C_API nubo_status nubo_sharded_options_init(nubo_sharded_options* options,
                                                 size_t struct_size) {
  return guard("nubo_sharded_options_init",
               [&] { init_options(require(options, "options"), struct_size); });
}

NUBO_C_API nubo_status nubo_sharded_padded_size(const nubo_sharded_options* options, int world,
                                                const size_t* slice_sizes, size_t slice_count,
                                                size_t* out) {
  return guard("nubo_sharded_padded_size", [&] {
    require(out, "out");
    if (slice_count == 0)
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "slice_count is 0: give the sizes of the slices (at least one)");
    *out = nubo::ShardedOptimizer::layout_for(read_options(options), world,
                                              slices_of(slice_sizes, slice_count))
               .padded_size();
  });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_create(nubo_worker* worker, nubo_buffer* params,
                                                     const nubo_sharded_options* options,
                                                     const size_t* slice_sizes, size_t slice_count,
                                                     nubo_sharded_optimizer** out) {
  return guard("nubo_sharded_optimizer_create", [&] {
    require(out, "out");
    *out = nullptr;
    auto* o =
        new nubo::ShardedOptimizer(require_worker(worker), require_buffer(params, "params"),
                                   read_options(options), slices_of(slice_sizes, slice_count));
    *out = reinterpret_cast<nubo_sharded_optimizer*>(o);
  });
}

NUBO_C_API void nubo_sharded_optimizer_free(nubo_sharded_optimizer* optimizer) {
  delete reinterpret_cast<nubo::ShardedOptimizer*>(optimizer);
}

NUBO_C_API nubo_status nubo_sharded_optimizer_slice_count(const nubo_sharded_optimizer* optimizer,
                                                          size_t* out) {
  return guard("nubo_sharded_optimizer_slice_count",
               [&] { *require(out, "out") = require_optimizer(optimizer).layout().slices(); });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_slice(const nubo_sharded_optimizer* optimizer,
                                                    size_t slice, nubo_shard_slice_info* out) {
  return guard("nubo_sharded_optimizer_slice", [&] {
    check_out_size(require(out, "out"), "out", "nubo_shard_slice_info");
    const nubo::ShardLayout& l = require_optimizer(optimizer).layout();
    const std::size_t i = require_index(slice, l.slices(), "the optimizer", "slice");
    nubo_shard_slice_info s{};
    s.size = l.size(i);
    s.offset = l.offset(i);
    s.padded = l.padded(i);
    s.shard = l.shard(i);
    s.shard_offset = l.shard_offset(i);
    write_sized(s, out, "out", "nubo_shard_slice_info");
  });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_loss_scale(const nubo_sharded_optimizer* optimizer,
                                                         float* out) {
  return guard("nubo_sharded_optimizer_loss_scale",
               [&] { *require(out, "out") = require_optimizer(optimizer).loss_scale(); });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_steps(const nubo_sharded_optimizer* optimizer,
                                                    uint64_t* out) {
  return guard("nubo_sharded_optimizer_steps",
               [&] { *require(out, "out") = require_optimizer(optimizer).steps(); });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_set_lr(nubo_sharded_optimizer* optimizer, float lr) {
  return guard("nubo_sharded_optimizer_set_lr",
               [&] { require_optimizer(optimizer).set_learning_rate(lr); });
}

NUBO_C_API nubo_status
nubo_sharded_optimizer_bytes_communicated(const nubo_sharded_optimizer* optimizer, uint64_t* out) {
  return guard("nubo_sharded_optimizer_bytes_communicated",
               [&] { *require(out, "out") = require_optimizer(optimizer).bytes_communicated(); });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_reduce(nubo_sharded_optimizer* optimizer,
                                                     size_t slice, nubo_buffer* grads) {
  return guard("nubo_sharded_optimizer_reduce",
               [&] { require_optimizer(optimizer).reduce(slice, require_buffer(grads, "grads")); });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_step(nubo_sharded_optimizer* optimizer,
                                                   nubo_buffer* grads,
                                                   nubo_sharded_step_summary* out) {
  return guard("nubo_sharded_optimizer_step", [&] {
    check_out_size(out, "out", "nubo_sharded_step_summary");
    nubo::ShardedOptimizer& o = require_optimizer(optimizer);
    const nubo::StepResult r = grads ? o.step(require_buffer(grads, "grads")) : o.step();
    if (out) write_sized(to_nubo_sharded_step_summary(r), out, "out", "nubo_sharded_step_summary");
  });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_gather(nubo_sharded_optimizer* optimizer,
                                                     size_t slice, nubo_buffer** out) {
  return guard("nubo_sharded_optimizer_gather", [&] {
    require(out, "out");
    *out = nullptr;
    give(require_optimizer(optimizer).gather(slice), out);
  });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_prefetch(nubo_sharded_optimizer* optimizer,
                                                       size_t slice) {
  return guard("nubo_sharded_optimizer_prefetch",
               [&] { require_optimizer(optimizer).prefetch(slice); });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_release(nubo_sharded_optimizer* optimizer,
                                                      size_t slice) {
  return guard("nubo_sharded_optimizer_release",
               [&] { require_optimizer(optimizer).release(slice); });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_save(nubo_sharded_optimizer* optimizer,
                                                   const char* path) {
  return guard("nubo_sharded_optimizer_save",
               [&] { require_optimizer(optimizer).save(require(path, "path")); });
}

NUBO_C_API nubo_status nubo_sharded_optimizer_load(nubo_sharded_optimizer* optimizer,
                                                   const char* path) {
  return guard("nubo_sharded_optimizer_load",
               [&] { require_optimizer(optimizer).load(require(path, "path")); });
}

NUBO_C_API nubo_status nubo_sharded_memory_per_worker(double parameters, int stage,
                                                      nubo_update_rule kind, nubo_dtype precision,
                                                      int world, nubo_sharded_memory_info* out) {
  return guard("nubo_sharded_memory_per_worker", [&] {
    check_out_size(require(out, "out"), "out", "nubo_sharded_memory_info");
    write_sized(
        to_nubo_sharded_memory_info(nubo::sharded_memory(
            parameters, stage, static_cast<nubo::OptimizerKind>(kind), to_dtype(precision), world)),
        out, "out", "nubo_sharded_memory_info");
  });
}

NUBO_C_API nubo_status nubo_optimizer_update_init(nubo_optimizer_update* update,
                                                  size_t struct_size) {
  return guard("nubo_optimizer_update_init", [&] {
    init_sized(default_update(), require(update, "update"), struct_size, "nubo_optimizer_update");
  });
}

NUBO_C_API nubo_status nubo_worker_cast(nubo_worker* worker, const nubo_buffer* in,
                                        nubo_buffer* out) {
  return guard("nubo_worker_cast", [&] {
    require_worker(worker).cast(require_buffer(in, "in"), require_buffer(out, "out"));
  });
}

NUBO_C_API nubo_status nubo_worker_unscale_check(nubo_worker* worker, nubo_buffer* grads,
                                                 float inv_scale, nubo_buffer* stats) {
  return guard("nubo_worker_unscale_check", [&] {
    require_worker(worker).unscale_check(require_buffer(grads, "grads"), inv_scale,
                                         require_buffer(stats, "stats"));
  });
}

NUBO_C_API nubo_status nubo_worker_optimizer_step(nubo_worker* worker,
                                                  const nubo_optimizer_update* update,
                                                  nubo_buffer* master, const nubo_buffer* grads,
                                                  nubo_buffer* m, nubo_buffer* v,
                                                  nubo_buffer* params) {
  return guard("nubo_worker_optimizer_step", [&] {
    nubo::Worker& w = require_worker(worker);
    const nubo::OptimizerUpdate u = read_update(*require(update, "update"));
    nubo::DeviceBuffer none;
    w.optimizer_step(u, require_buffer(master, "master"), require_buffer(grads, "grads"),
                     require_buffer(m, "m"), v ? require_buffer(v, "v") : none,
                     params ? &require_buffer(params, "params") : nullptr);
  });
}

}  // extern "C"
