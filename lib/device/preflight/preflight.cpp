// nubo::device::preflight: measures every GPU asked for, each pair of them and the host, and
// judges each figure against what a healthy device of its model reaches (attainable.hpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "device/backend/attainable.hpp"
#include "device/backend/backend.hpp"
#include "device/backend/gpu_catalog.hpp"
#include "device/preflight/group_timer.hpp"
#include "device/preflight/measure.hpp"
#include "device/sim/sim_profile.hpp"
#include "nubo/error.hpp"
#include "nubo/preflight.hpp"

namespace nubo::device {
namespace {

using detail::DeviceBackend;
using detail::GpuModel;

constexpr double kDefaultBudget = 60, kQuickBudget = 10;
constexpr DType kGemmTypes[] = {DType::bf16, DType::f16, DType::tf32, DType::f32};

std::string fixed(double v, int digits = 1) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The host link of a GPU: as trained now, and the most it and its slot allow.
struct HostLink {
  int gen = 0, width = 0, gen_max = 0, width_max = 0;
  bool reduced() const { return gen < gen_max || width < width_max; }
};

HostLink host_link(const Device& d, const GpuModel* model, const HealthReport& health) {
  HostLink l;
  l.gen_max = l.gen = model && model->pcie_gen > 0 ? model->pcie_gen : 4;
  l.width_max = l.width = 16;
  if (d.backend == Backend::sim) {
    const auto p = detail::sim_profile(d);
    if (p.pcie_gen) l.gen = p.pcie_gen;
    l.width = p.pcie_width;
  }
  for (const auto& g : health.gpus) {
    if (g.device != d.index) continue;
    if (g.pcie_gen_max > 0) l.gen_max = g.pcie_gen_max;
    if (g.pcie_width_max > 0) l.width_max = g.pcie_width_max;
    // The generation read at idle is a power-saving state, not the trained link: keep the
    // width only (the transfer measurement shows the rest).
    if (g.pcie_width > 0) l.width = g.pcie_width;
  }
  return l;
}

std::string link_text(int gen, int width) {
  return "PCIe Gen" + std::to_string(gen) + " x" + std::to_string(width);
}

std::string check_name(DType t) {
  return "gemm-" + std::string(dtype_name(t));
}

Measurement measurement(std::string check, int device, std::string unit, int peer = -1) {
  Measurement m;
  m.check = std::move(check);
  m.device = device;
  m.peer = peer;
  m.unit = std::move(unit);
  return m;
}

class Preflight {
 public:
  Preflight(const DeviceReport& report, const PreflightOptions& options, PreflightReport& out)
      : report_(report), options_(options), out_(out) {}

  void run();
  const HealthReport& health_report() const { return health_; }

 private:
  void gpu(int index);
  void pair(int a, int b);
  void group(const std::vector<int>& usable);
  double peer_gbs(int a, int b, bool measured) const;
  void host();
  void add(Measurement m);
  void fail_device(int index, const std::string& why);
  DeviceBackend& backend(int index);

  const DeviceReport& report_;
  const PreflightOptions& options_;
  PreflightReport& out_;
  HealthReport health_;
  detail::MeasureLimits limits_;
  std::vector<std::unique_ptr<DeviceBackend>> backends_;  // by position in options_.devices
  std::vector<int> indices_;
};

DeviceBackend& Preflight::backend(int index) {
  const auto pos = std::find(indices_.begin(), indices_.end(), index) - indices_.begin();
  auto& b = backends_[static_cast<std::size_t>(pos)];
  if (!b) b = detail::make_backend(report_.devices[static_cast<std::size_t>(index)]);
  return *b;
}

void Preflight::add(Measurement m) {
  if (m.expected > 0) {
    m.ratio = m.measured / m.expected;
    m.verdict = m.ratio >= options_.threshold ? Verdict::healthy : Verdict::degraded;
  }
  out_.measurements.push_back(std::move(m));
}

void Preflight::fail_device(int index, const std::string& why) {
  for (auto& v : out_.devices)
    if (v.device == index) {
      v.verdict = Verdict::unusable;
      v.reason = why;
    }
}

void Preflight::gpu(int index) {
  const Device& d = report_.devices[static_cast<std::size_t>(index)];
  const GpuModel* model = detail::GpuCatalog::builtin().find(d.model);
  DeviceBackend& b = backend(index);
  const PeakRates& peaks = model ? model->peak : d.peak;
  for (DType t : kGemmTypes) {
    Measurement m = measurement(check_name(t), index, "TFLOP/s");
    const double peak = detail::peak_rate(peaks, t);
    if (peak <= 0) continue;  // the model has no such rate (e.g. no tensor cores for bf16)
    m.expected = detail::attainable_gemm_tflops(peaks, t);
    m.basis = std::string(dtype_name(t)) + " peak " + fixed(peak) + " x " +
              fixed(detail::kGemmFraction, 2);
    m.measured = detail::measure_gemm_tflops(b, t, limits_);
    add(std::move(m));
  }
  Measurement mem = measurement("memory-bandwidth", index, "GB/s");
  const double datasheet_gbs = model ? model->memory_gbs : d.memory_bandwidth_gbs;
  mem.expected = detail::attainable_memory_gbs(datasheet_gbs);
  mem.basis =
      "datasheet " + fixed(datasheet_gbs, 0) + " GB/s x " + fixed(detail::kMemoryFraction, 2);
  mem.measured = detail::measure_memory_gbs(b, limits_);
  add(std::move(mem));

  const HostLink link = host_link(d, model, health_);
  for (bool to_device : {true, false}) {
    Measurement m = measurement(to_device ? "host-to-device" : "device-to-host", index, "GB/s");
    m.expected = detail::attainable_pcie_gbs(link.gen_max, link.width_max);
    m.basis = link_text(link.gen_max, link.width_max) + " " +
              fixed(detail::pcie_link_gbs(link.gen_max, link.width_max)) + " GB/s x " +
              fixed(detail::kPcieFraction, 2);
    if (link.reduced())
      m.note = "the link trained at " + link_text(link.gen, link.width) + ", which allows " +
               fixed(detail::attainable_pcie_gbs(link.gen, link.width)) + " GB/s";
    m.measured = to_device ? detail::measure_to_device_gbs(b, limits_)
                           : detail::measure_to_host_gbs(b, limits_);
    add(std::move(m));
  }
}

// One direction between two GPUs: what the link should carry (measured = false), or what
// simulated devices model it to carry (their profiles' PCIe links and NVLink rates).
double Preflight::peer_gbs(int a, int b, bool measured) const {
  const Device& da = report_.devices[static_cast<std::size_t>(a)];
  const Device& db = report_.devices[static_cast<std::size_t>(b)];
  const GpuModel* model = detail::GpuCatalog::builtin().find(da.model);
  if (!model) return 0;  // no NVLink or PCIe figures to expect
  const Link& link = report_.link(a, b);
  const HostLink la = host_link(da, model, health_), lb = host_link(db, model, health_);
  if (!measured)
    return detail::attainable_peer_gbs(link, *model,
                                       detail::attainable_pcie_gbs(la.gen_max, la.width_max),
                                       detail::attainable_pcie_gbs(lb.gen_max, lb.width_max));
  double gbs =
      detail::attainable_peer_gbs(link, *model, detail::attainable_pcie_gbs(la.gen, la.width),
                                  detail::attainable_pcie_gbs(lb.gen, lb.width));
  if (link.kind == LinkKind::nvlink)
    gbs *= std::min(detail::sim_profile(da).nvlink, detail::sim_profile(db).nvlink);
  return gbs;
}

void Preflight::pair(int a, int b) {
  Measurement m = measurement("peer-to-peer", a, "GB/s", b);
  m.expected = peer_gbs(a, b, false);
  if (m.expected <= 0) return;
  m.basis = report_.link(a, b).name() + " between GPU" + std::to_string(a) + " and GPU" +
            std::to_string(b);
  const Device& da = report_.devices[static_cast<std::size_t>(a)];
  const Device& db = report_.devices[static_cast<std::size_t>(b)];
  if (da.backend == Backend::sim && db.backend == Backend::sim) {
    // Simulated memory is host memory: the copy's real speed says nothing; the model does.
    m.measured = peer_gbs(a, b, true);
    m.note = "modelled (simulated devices)";
  } else {
    m.measured = detail::measure_peer_gbs(backend(a), backend(b), limits_);
  }
  add(std::move(m));
}

// The all-reduce bus bandwidth of the group: 2(n-1)/n x bytes / time, as nccl-tests reports it.
// A ring all-reduce runs at its slowest hop, so that is what it should reach.
void Preflight::group(const std::vector<int>& usable) {
  const std::size_t n = usable.size();
  if (n < 2) return;
  Measurement m = measurement("all-reduce", -1, "GB/s");
  double expected = 1e300, modelled = 1e300;
  for (std::size_t k = 0; k < n; ++k) {
    const int a = usable[k], b = usable[(k + 1) % n];
    expected = std::min(expected, peer_gbs(a, b, false));
    modelled = std::min(modelled, peer_gbs(a, b, true));
  }
  if (expected <= 0 || expected >= 1e300) return;
  m.expected = expected;
  m.basis = "the slowest hop of a ring over GPU";
  for (std::size_t k = 0; k < n; ++k) {
    if (k) m.basis += ',';
    m.basis += std::to_string(usable[k]);
  }
  std::vector<Device> devices;
  for (int i : usable) devices.push_back(report_.devices[static_cast<std::size_t>(i)]);
  if (std::all_of(devices.begin(), devices.end(),
                  [](const Device& d) { return d.backend == Backend::sim; })) {
    m.measured = modelled;
    m.note = "modelled (simulated devices)";
    add(std::move(m));
    return;
  }
  const auto timer = detail::all_reduce_timer();
  if (!timer) {
    m.note = "not measured: this nubo was built without teams (NUBO_WITH_PARALLEL=OFF)";
    m.expected = 0;
    add(std::move(m));
    return;
  }
  const std::size_t bytes = std::size_t{256} << 20;
  const int reps = options_.quick ? 5 : 20;
  backends_.clear();  // the team opens the devices itself
  backends_.resize(indices_.size());
  const double seconds = timer(devices, bytes, reps, limits_.should_stop);
  m.measured = seconds > 0 ? 2.0 * static_cast<double>(n - 1) / static_cast<double>(n) *
                                 static_cast<double>(bytes) * reps / seconds / 1e9
                           : 0;
  add(std::move(m));
}

void Preflight::host() {
  const Device cpu = report_.host_device();
  auto b = detail::make_backend(cpu);
  Measurement gemm = measurement("host-gemm-f32", -1, "GFLOP/s");
  gemm.measured = detail::measure_gemm_tflops(*b, DType::f32, limits_) * 1000;
  gemm.note = "OpenBLAS on " + std::to_string(report_.host.logical_cores) + " logical cores";
  add(std::move(gemm));
  Measurement mem = measurement("host-memory-bandwidth", -1, "GB/s");
  mem.measured = detail::measure_memory_gbs(*b, limits_);
  add(std::move(mem));
}

void Preflight::run() {
  indices_ = options_.devices;
  if (indices_.empty())
    for (const auto& d : report_.devices) indices_.push_back(d.index);
  for (int i : indices_) {
    if (i < 0 || i >= static_cast<int>(report_.devices.size()))
      throw Error(Errc::invalid_argument, "preflight: there is no GPU " + std::to_string(i) +
                                              " (the report lists " +
                                              std::to_string(report_.devices.size()) + ")");
    if (std::count(indices_.begin(), indices_.end(), i) > 1)
      throw Error(Errc::invalid_argument,
                  "preflight: GPU " + std::to_string(i) + " is named twice");
    out_.devices.push_back(
        {i, report_.devices[static_cast<std::size_t>(i)].model, Verdict::healthy, ""});
  }
  backends_.resize(indices_.size());

  const bool any_cuda = std::any_of(indices_.begin(), indices_.end(), [&](int i) {
    return report_.devices[static_cast<std::size_t>(i)].backend == Backend::cuda;
  });
  if (any_cuda) health_ = health(report_);

  // The budget, shared evenly by the measurements (each also pays a short warm-up).
  const std::size_t n = indices_.size();
  const double pairs = static_cast<double>(n * (n - (n ? 1 : 0)) / 2);
  const double checks =
      7.0 * static_cast<double>(n) + pairs + (n > 1 ? 1 : 0) + (options_.host ? 2 : 0);
  const double budget = options_.budget_seconds > 0 ? options_.budget_seconds
                        : options_.quick            ? kQuickBudget
                                                    : kDefaultBudget;
  limits_.slice_seconds = std::clamp(0.7 * budget / std::max(checks, 1.0), 0.02, 5.0);
  limits_.should_stop = options_.should_stop ? &options_.should_stop : nullptr;

  for (int i : indices_) {
    try {
      gpu(i);
    } catch (const Error& e) {
      if (e.code() == Errc::cancelled) throw;
      fail_device(i, e.what());
    }
  }
  for (std::size_t x = 0; x < n; ++x)
    for (std::size_t y = x + 1; y < n; ++y) {
      const int a = indices_[x], b = indices_[y];
      if (out_.find(a)->verdict == Verdict::unusable || out_.find(b)->verdict == Verdict::unusable)
        continue;
      try {
        pair(a, b);
      } catch (const Error& e) {
        if (e.code() == Errc::cancelled) throw;
        Measurement m = measurement("peer-to-peer", a, "GB/s", b);
        m.verdict = Verdict::unusable;
        m.note = e.what();
        out_.measurements.push_back(std::move(m));
      }
    }
  std::vector<int> usable;
  for (int i : indices_)
    if (out_.find(i)->verdict != Verdict::unusable) usable.push_back(i);
  try {
    group(usable);
  } catch (const Error& e) {
    if (e.code() == Errc::cancelled) throw;
    Measurement m = measurement("all-reduce", -1, "GB/s");
    m.verdict = Verdict::unusable;
    m.note = e.what();
    out_.measurements.push_back(std::move(m));
  }
  if (options_.host) host();
}

// Each GPU's verdict: its worst figure or health finding; the group's: the worst of all.
void judge(PreflightReport& out, const HealthReport& health) {
  for (auto& v : out.devices) {
    if (v.verdict == Verdict::unusable) continue;
    double worst = 2;
    for (const auto& m : out.measurements) {
      if (m.device != v.device || m.peer >= 0 || m.verdict == Verdict::healthy) continue;
      if (m.ratio < worst) {
        worst = m.ratio;
        v.verdict = Verdict::degraded;
        v.reason = m.check + " at " + fixed(m.ratio, 2) + " of expected (" + fixed(m.measured) +
                   " of " + fixed(m.expected) + " " + m.unit + ")" +
                   (m.note.empty() ? "" : "; " + m.note);
      }
    }
    for (const auto& f : health.findings_for(v.device)) {
      out.findings.push_back(f);
      if (f.status == HealthStatus::fail) {
        v.verdict = Verdict::unusable;
        v.reason = f.message;
      } else if (f.status == HealthStatus::warn && v.verdict == Verdict::healthy) {
        v.verdict = Verdict::degraded;
        v.reason = f.message;
      }
    }
  }
  out.verdict = Verdict::healthy;
  for (const auto& v : out.devices) out.verdict = std::max(out.verdict, v.verdict);
  for (const auto& m : out.measurements)
    if (m.peer >= 0 || m.check == "all-reduce") out.verdict = std::max(out.verdict, m.verdict);
}

}  // namespace

PreflightReport preflight(const DeviceReport& report, const PreflightOptions& options) {
  if (!(options.threshold > 0 && options.threshold <= 1))
    throw Error(Errc::invalid_argument,
                "preflight: threshold must be in (0, 1], got " + std::to_string(options.threshold));
  if (!(options.budget_seconds >= 0 && options.budget_seconds <= 3600))
    throw Error(Errc::invalid_argument,
                "preflight: budget_seconds must be between 0 (the default) and 3600, got " +
                    std::to_string(options.budget_seconds));
  const auto start = std::chrono::steady_clock::now();
  PreflightReport out;
  out.threshold = options.threshold;
  Preflight run(report, options, out);
  run.run();
  judge(out, run.health_report());
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace nubo::device
