// The time model: compute from peak rates, ring all-reduce communication, staging, checkpoints,
// and spot interruptions (Young/Daly). Formulas and sources: docs/cost.md.
#include "cost/model.hpp"
#include "cost/efficiency.hpp"
#include "cost/workload_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace nubo::cost {
namespace detail {

double peak_tflops(const GpuModel& gpu, DType dtype) {
  return nubo::detail::peak_rate(gpu.peak, dtype);  // integer work: 0, refused by the check
}

double derived_link_gbs(const GpuModel& gpu, Interconnect interconnect) {
  switch (interconnect) {
    case Interconnect::nvlink:
    case Interconnect::nvswitch:
      // gpu_models.csv holds the total bidirectional NVLink bandwidth of all links.
      return gpu.nvlink_gbs / 2;
    case Interconnect::pcie:
    case Interconnect::none:
      // PCIe x16, one direction: 16 lanes x 0.985 GB/s (gen3, 128b/130b) x 2^(gen-3).
      return 16 * 0.985 * std::pow(2.0, gpu.pcie_gen - 3);
  }
  return 0;
}

namespace {

// The cost model prices floating-point work by the GPU table's peak for its precision.
DType compute_dtype(DType d, const std::string& what) {
  if (d == DType::f32 || d == DType::tf32 || d == DType::f16 || d == DType::bf16) return d;
  throw Error(Errc::invalid_argument, what + ": dtype " + std::string(dtype_name(d)) +
                                          " has no peak rate to price: use f32, tf32, f16 or bf16");
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double measured_peak(const Profile& p) {
  if (p.device_peak_tflops > 0) return p.device_peak_tflops;
  if (const auto* gpu = GpuCatalog::builtin().find(p.device_model)) {
    double peak = peak_tflops(*gpu, p.dtype);
    if (peak > 0) return peak;
  }
  throw Error(Errc::invalid_argument,
              "profile " + p.source + ": the measured device '" + p.device_model +
                  "' has no known " + std::string(dtype_name(p.dtype)) +
                  " peak: add devices.peak_tflops to the profile (nubo-train writes it)");
}

}  // namespace

void check_range(double v, std::string_view what, const char* name, double min, double max) {
  if (!std::isfinite(v) || v < min || v > max)
    throw Error(Errc::invalid_argument, std::string(what) + ": " + name + " is " + num(v) +
                                            "; it must lie in [" + num(min) + ", " + num(max) +
                                            "]");
}

WorkloadModel compile(const Workload& w) {
  // Every numeric field in the range the table gives it; a model-described one only without a
  // profile, which the model then does not read.
  for (const auto& f : workload_field_table())
    if (!(w.profile && f.analytic)) check_workload_field(f, w.*f.value, "workload");

  WorkloadModel m;
  m.overlap = w.overlap;
  if (w.profile) {
    const Profile& p = *w.profile;
    // Simulated GPUs are host threads with a GPU's name: their times say nothing of the GPU's.
    if (p.backend == "sim")
      throw Error(Errc::invalid_argument,
                  "profile " + p.source + " was measured on simulated " + p.device_model +
                      " devices (NUBO_SIM_DEVICES): its times are the host CPU's, not the "
                      "GPU's, so it cannot predict a run; measure on the real GPU, or describe "
                      "the workload by its FLOPs (--flops-per-sample, --samples)");
    if (p.compute_time_s <= 0 || p.global_batch <= 0 || p.dataset_samples <= 0 || p.devices < 1)
      throw Error(Errc::invalid_argument,
                  "profile " + p.source +
                      ": needs per-step compute time, the global batch, the dataset's sample count "
                      "and the device count to predict a run");
    m.measured = true;
    m.dtype = compute_dtype(p.dtype, "profile " + p.source);
    m.steps = w.epochs * p.dataset_samples / p.global_batch;
    m.global_batch = p.global_batch;
    // Work in device-TFLOP at the measured efficiency: seconds x devices x their peak.
    m.tflop = p.compute_time_s * p.devices * measured_peak(p) * m.steps;
    m.allreduce_bytes = p.allreduce_bytes;
    m.memory.stated =
        w.memory_per_gpu_bytes > 0 ? w.memory_per_gpu_bytes : p.memory_per_device_bytes;
    if (w.memory_per_gpu_bytes <= 0 && p.parameters > 0 && p.memory_per_device_bytes > 0)
      m.memory = measured_memory(p);
    m.dataset_bytes = w.dataset_bytes > 0 ? w.dataset_bytes : p.dataset_bytes;
    m.checkpoint_bytes = w.checkpoint_bytes > 0 ? w.checkpoint_bytes : p.checkpoint_bytes;
  } else {
    m.dtype = compute_dtype(w.dtype, "workload");
    m.memory = memory_model(w);
    const double flops = w.training_flops();
    if (flops <= 0)
      throw Error(Errc::invalid_argument,
                  "workload: give parameters with tokens, total_flops, or flops_per_sample "
                  "with samples and epochs (or a measured profile)");
    m.tflop = flops / 1e12;
    // Calibrated by GPU when the model's size is known, else the typical figure.
    m.efficiency = w.mfu > 0 ? w.mfu : w.parameters > 0 ? 0 : kDefaultMfu;
    if (w.parameters > 0) m.hidden = dense_shape(w.parameters).hidden;
    m.global_batch = w.global_batch;
    if (w.global_batch > 0 && w.samples > 0)
      m.steps = w.samples * w.epochs / w.global_batch;
    else if (w.global_batch > 0 && w.tokens > 0)
      m.steps = w.tokens / (w.global_batch * w.tokens_per_sample());
    m.allreduce_bytes =
        w.parameter_bytes > 0 ? w.parameter_bytes : w.parameters * m.memory.gradient_bytes;
    if (!m.memory.modelled && m.memory.stated <= 0)
      m.notes.push_back(
          "GPU memory not modelled: give --params (or --gpu-memory) to rule out GPUs too small");
    m.dataset_bytes = w.dataset_bytes;
    m.checkpoint_bytes = w.checkpoint_bytes;
    if (m.checkpoint_bytes <= 0 && (m.checkpoint_bytes = checkpoint_bytes(m.memory)) > 0) {
      m.checkpoint_assumed = true;
      char gb[32];
      std::snprintf(gb, sizeof gb, "%.3g GB", m.checkpoint_bytes / kGB);
      m.notes.push_back("on spot, checkpoints of " + std::string(gb) +
                        " assumed: the model's weights and optimizer state (--checkpoint-size "
                        "sets them for every pricing)");
    }
  }
  // A profile measured its communication; an analytic workload needs steps and bytes.
  m.communication_modelled = m.measured || (m.allreduce_bytes > 0 && m.steps > 0);
  m.staged_bytes = m.dataset_bytes * w.compression_ratio;
  m.checkpoint_write_mbps = w.checkpoint_write_mbps;
  m.checkpoint_interval_s = w.checkpoint_interval_s > 0 ? w.checkpoint_interval_s : 3600;
  m.egress_bytes = w.egress_bytes;
  m.storage_months_after = w.storage_months_after;
  return m;
}

RunTime run_time(const WorkloadModel& w, const Hardware& h, int nodes, double comm_efficiency) {
  RunTime rt;
  const double n = h.gpus, m = nodes, total = n * m;
  const double efficiency =
      w.efficiency > 0 ? w.efficiency : model_flops_utilisation(*h.gpu, w.hidden);
  rt.compute_s = w.tflop / (total * peak_tflops(*h.gpu, w.dtype) * h.compute_scale * efficiency);
  double comm_step = 0;
  if (w.allreduce_bytes > 0 && w.steps > 0) {
    // Ring all-reduce moves 2(n-1)/n x S bytes over each link (Patarasuk & Yuan 2009). Across
    // nodes, hierarchically: inside each node, then 2(m-1)/m x S over the node's network
    // (reduce-scatter + all-gather inside, all-reduce across; Thakur, Rabenseifner & Gropp 2005).
    const double S = w.allreduce_bytes;
    if (n > 1) comm_step += 2 * (n - 1) / n * S / (h.link_Bps * comm_efficiency);
    if (m > 1) comm_step += 2 * (m - 1) / m * S / (h.network_Bps * comm_efficiency);
  }
  // By default the reduction runs while backward computes the next gradients (DDP's buckets,
  // ZeRO's reduce-scatter; Li et al. 2020): only what outlasts backward, 2/3 of a step's compute
  // (forward 2N, backward 4N FLOPs a token), is exposed. A stated overlap hides that fraction.
  const double compute_step = w.steps > 0 ? rt.compute_s / w.steps : 0;
  const double exposed =
      w.overlap < 0 ? std::max(0.0, comm_step - compute_step * 2 / 3) : comm_step * (1 - w.overlap);
  rt.communication_s = exposed * w.steps;
  rt.step_s = w.steps > 0 ? rt.compute_s / w.steps + exposed : 0;
  // Staging: every node reads the (compressed) dataset at the slower of disk and network.
  const double disk = h.provider->block_storage_mbps * 1e6;
  const double rate = h.network_Bps > 0 ? std::min(disk, h.network_Bps) : disk;
  rt.staging_s = w.staged_bytes / rate;
  return rt;
}

double checkpoint_write_s(const WorkloadModel& w, const Hardware& h, int nodes) {
  const double mbps =
      w.checkpoint_write_mbps > 0 ? w.checkpoint_write_mbps : h.provider->block_storage_mbps;
  return w.checkpoint_bytes / (mbps * 1e6 * std::max(nodes, 1));
}

Timing timing(const WorkloadModel& w, const Hardware& h, const RunTime& rt, Pricing pricing,
              double node_mtbi_s, double restart_s, int nodes) {
  Timing t;
  t.time.compute_s = rt.compute_s;
  t.time.communication_s = rt.communication_s;
  t.time.staging_s = rt.staging_s;
  t.time.steps = w.steps;
  t.time.step_s = rt.step_s;
  const double work = rt.work_s(), delta = checkpoint_write_s(w, h, nodes);
  if (pricing != Pricing::spot) {
    // Periodic checkpoints that are never needed on a machine that is not reclaimed, but that
    // a job writes anyway; one every interval.
    if (delta > 0 && !w.checkpoint_assumed) {
      t.interval_s = w.checkpoint_interval_s;
      t.time.checkpoint_s = std::floor(work / t.interval_s) * delta;
    }
    return t;
  }
  auto cp = checkpoint_plan(work, delta, node_mtbi_s / std::max(nodes, 1), restart_s);
  t.time.checkpoint_s = cp.write_s;
  t.time.rework_s = cp.lost_work_s;
  t.time.restart_s = cp.restart_s;
  t.interval_s = cp.daly_interval_s;
  t.interruptions = cp.interruptions;
  return t;
}

std::string communication_needs(const WorkloadModel& w) {
  return w.allreduce_bytes > 0
             ? "give the global batch (--batch, with --samples, or --tokens and --seq-len) to "
               "count the steps"
             : "give the model's size (--params or --params-bytes) and the global batch (--batch)";
}

std::string batch_reason(double global_batch, int gpus) {
  char batch[32];
  std::snprintf(batch, sizeof batch, "%g", global_batch);
  return "its " + std::to_string(gpus) + " GPUs outnumber the global batch of " + batch +
         " samples, so some would have nothing to do: give a batch of at least " +
         std::to_string(gpus) + " (--batch), or fewer nodes";
}

std::string interruptions_reason(double total_s) {
  return "spot interruptions would stretch it to " + format_duration(total_s) + ", over " +
         std::to_string(static_cast<int>(kMaxSpotStretch)) +
         " times its work, each undoing the work since the last checkpoint: give the checkpoint "
         "size (--checkpoint-size), or take on-demand";
}

double storage_cost(const WorkloadModel& w, const ProviderPrices& p, double total_s, int nodes) {
  // During the run: a block volume per node with the dataset and two checkpoints (the newest
  // and the one before, so a corrupt newest can fall back). After: object storage for the
  // compressed dataset and the final checkpoint.
  const double block_gb = (w.dataset_bytes + 2 * w.checkpoint_bytes) / kGB;
  const double months = total_s / 3600 / kHoursPerMonth;
  const double during = block_gb * p.block_storage_gb_month * months * nodes;
  const double object_gb = (w.staged_bytes + w.checkpoint_bytes) / kGB;
  const double after = object_gb * p.object_storage_gb_month * w.storage_months_after;
  return during + after;
}

}  // namespace detail

double Workload::training_flops() const {
  if (total_flops > 0) return total_flops;
  const double all_tokens = tokens > 0 ? tokens : samples * sequence_length * epochs;
  if (parameters > 0 && all_tokens > 0) return 6 * parameters * all_tokens;
  return flops_per_sample * samples * epochs;
}

double CheckpointPlan::overhead_fraction() const {
  const double work = expected_wall_s - write_s - lost_work_s - restart_s;
  return work > 0 ? (expected_wall_s - work) / work : 0;
}

CheckpointPlan checkpoint_plan(double work_s, double write_s, double mtbi_s, double restart_s,
                               double interval_s) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw Error(Errc::invalid_argument, "checkpoint plan: " + what);
  };
  need(std::isfinite(work_s) && work_s >= 0, "the work must be a finite time >= 0");
  need(std::isfinite(write_s) && write_s >= 0, "the checkpoint write time must be >= 0");
  need(std::isfinite(mtbi_s) && mtbi_s > 0, "the mean time between interruptions must be > 0");
  need(std::isfinite(restart_s) && restart_s >= 0, "the restart time must be >= 0");
  need(std::isfinite(interval_s) && interval_s >= 0, "the checkpoint interval must be >= 0");
  CheckpointPlan cp;
  const double d = write_s, M = mtbi_s, R = restart_s;
  // Young (1974): tau = sqrt(2 delta M). Daly (2006), eq. 37: for delta < 2M,
  // tau = sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta; else tau = M.
  cp.young_interval_s = std::sqrt(2 * d * M);
  cp.daly_interval_s =
      d < 2 * M ? cp.young_interval_s * (1 + std::sqrt(d / (2 * M)) / 3 + d / (2 * M) / 9) - d : M;
  if (interval_s > 0) cp.daly_interval_s = interval_s;
  double tau = cp.daly_interval_s, segments = 0;
  if (d <= 0 || tau >= work_s) {
    // No checkpoint (none can be written, or the job is shorter than one interval): one segment,
    // and an interruption loses everything done so far.
    tau = work_s;
    cp.daly_interval_s = d <= 0 ? 0 : cp.daly_interval_s;
  } else {
    segments = work_s / tau;
  }
  if (work_s <= 0) return cp;
  // Daly (2006), eq. 20: the expected wall time of T_s of work in segments of tau, each followed
  // by a checkpoint of delta, with exponentially distributed interruptions of mean M and a
  // restart of R after each: T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau.
  const double seg_d = segments > 0 ? d : 0;
  cp.expected_wall_s = M * std::exp(R / M) * std::expm1((tau + seg_d) / M) * (work_s / tau);
  cp.write_s = segments * d;
  cp.interruptions = cp.expected_wall_s / M;  // Poisson: one per M of wall time
  cp.restart_s = cp.interruptions * R;
  cp.lost_work_s = std::max(0.0, cp.expected_wall_s - work_s - cp.write_s - cp.restart_s);
  if (!std::isfinite(cp.expected_wall_s)) {
    cp.lost_work_s = cp.restart_s = cp.interruptions = std::numeric_limits<double>::infinity();
  }
  return cp;
}

}  // namespace nubo::cost
