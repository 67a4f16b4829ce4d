// The run's profile for the cost model (docs/profile.schema.json), from what run_step measured
// on this process's first worker.
#include "device/host/host_cores.hpp"
#include "nubo/error.hpp"
#include "train/trainer_impl.hpp"

namespace nubo {

cost::Profile DataParallelTrainer::profile() const {
  const Impl& m = *impl_;
  cost::Profile p;
  Device d;
  d = m.team.worker(0).device();
  p.backend = d.backend == Backend::host ? "cpu" : std::string(backend_name(d.backend));
  p.device_model = d.backend == Backend::host || d.model.empty() ? d.name : d.model;
  p.devices = m.team.size();
  p.processes = std::max(1, m.team.size() / std::max(1, m.team.local_size()));
  p.dtype = m.opt.precision;
  p.global_batch = static_cast<double>(m.opt.global_batch);
  p.steps = static_cast<double>(m.measured_steps);
  const double steps = std::max<double>(1, static_cast<double>(m.measured_steps));
  p.step_time_s = m.wall_s / steps;
  // Everything a worker does apart from waiting for its peers: data, forward, backward, update.
  p.compute_time_s = (m.times.data + m.times.compute + m.times.update) / steps;
  if (p.compute_time_s <= 0) p.compute_time_s = 1e-9;  // the schema wants it positive
  p.communication_time_s = (m.times.comm_wait + m.times.stats) / steps;
  p.gemm_time_s = m.times.gemm / steps;
  if (d.backend != Backend::cuda) {
    p.host_threads = m.team.worker(0).host_threads();
    p.host_cpus = static_cast<int>(detail::allowed_cores().size());
  }
  // What each worker's gradients carry per step: 16-bit on the wire in bf16/f16 or with
  // compression; a ZeRO stage 3 run also gathers the parameters twice (ZeRO's 1.5x).
  const bool wire16 = m.opt.precision != DType::f32 || m.opt.grad_compression != DType::f32;
  p.allreduce_bytes =
      static_cast<double>(m.layout.total) * (wire16 ? 2.0 : 4.0) *
      (StagePlan::of(m.opt.zero_stage, "zero_stage").parameters_sharded ? 1.5 : 1.0);
  p.samples_per_s = m.wall_s > 0 ? static_cast<double>(m.measured_samples) / m.wall_s : 0;
  const double checkpoints = static_cast<double>(m.checkpoints);
  p.checkpoint_time_s = m.checkpoints ? m.write_s / checkpoints : 0;
  p.checkpoint_stall_s = m.stalls ? m.stall_s / static_cast<double>(m.stalls) : 0;
  p.checkpoint_interval_s = m.checkpoint_interval_s();
  p.checkpoint_expected_waste = m.expected_waste;
  p.checkpoint_bytes = m.checkpoint_bytes;
  p.dataset_samples = static_cast<double>(m.train->size());
  p.dataset_bytes = static_cast<double>(m.train->bytes_on_disk());
  p.parameter_bytes = static_cast<double>(m.layout.total * sizeof(float));
  // A CPU has no entry in the GPU table: give the rate it achieved (6 FLOPs per parameter per
  // sample for forward and backward of a dense layer), so the model can scale from it.
  double flops = 6.0 * static_cast<double>(m.layout.total) *
                 static_cast<double>(m.opt.global_batch) / static_cast<double>(m.team.size());
  double peak = d.peak.fp32 > 0 ? d.peak.fp32 : flops / p.compute_time_s / 1e12;
  p.device_peak_tflops = peak;
  // Measured: what nubo holds on the first worker's device (parameters, gradients, optimizer
  // state, activations).
  p.memory_per_device_bytes = static_cast<double>(m.team.worker(0).bytes_in_use());
  p.parameters = static_cast<double>(m.layout.total);
  p.zero_stage = m.opt.zero_stage;
  p.optimizer = m.opt.optimizer == Optimizer::adam ? "adam" : "sgd";
  return p;
}

std::string profile_json(const cost::Profile& profile) {
  return profile.to_json();
}

}  // namespace nubo
