// The preflight: is each GPU, each link between GPUs, and the host, as fast as its model should
// be? It measures GEMM in every precision, device memory bandwidth, pinned host transfers and
// peer-to-peer copies, compares each figure with what a healthy device of that model reaches,
// and says per GPU and for the group: healthy, degraded or unusable. docs/preflight.md lists
// the checks, the expected figures and what to do about each verdict.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/device.hpp"
#include "nubo/export.hpp"
#include "nubo/health.hpp"

namespace nubo::device {

// Ordered from best to worst; a group is as bad as its worst member.
enum class Verdict { healthy, degraded, unusable };
NUBO_API std::string_view verdict_name(Verdict v) noexcept;

// One measured figure and what it was compared with.
struct Measurement {
  std::string check;  // "gemm-bf16", "memory-bandwidth", "host-to-device", "peer-to-peer", ...
  int device = -1;    // nubo's device index; -1: the host
  int peer = -1;      // the GPU a peer-to-peer copy came from; -1 for other checks
  double measured = 0;
  double expected = 0;  // 0: nothing to compare with (the host has no model table)
  std::string unit;     // "TFLOP/s", "GFLOP/s" or "GB/s"
  double ratio = 0;     // measured / expected; 0 when there is no expected figure
  Verdict verdict = Verdict::healthy;
  std::string basis;  // where the expected figure comes from, e.g. "bf16 peak 989 x 0.75"
  std::string note;   // what else was seen, e.g. "the link trained at PCIe Gen3 x8"
};

// The verdict on one GPU, with the reason for anything but healthy.
struct DeviceVerdict {
  int device = 0;
  std::string model;  // the GPU table's key ("" when the model is not in it)
  Verdict verdict = Verdict::healthy;
  std::string reason;  // e.g. "gemm-bf16 at 0.50 of expected (371 of 742 TFLOP/s)"
};

struct PreflightOptions {
  std::vector<int> devices;   // nubo indices to check; empty: every GPU of the report
  bool quick = false;         // a budget of about 10 s instead of 60
  double budget_seconds = 0;  // 0: 60 s, or 10 s with quick
  double threshold = 0.8;     // below this fraction of the expected figure: degraded
  bool host = true;           // measure the host's GEMM and memory bandwidth too
  // Polled between measurements: true stops the preflight (Errc::cancelled) after the work in
  // flight has finished and every buffer is freed, e.g. on Ctrl-C.
  std::function<bool()> should_stop;
};

class NUBO_API PreflightReport {
 public:
  std::vector<Measurement> measurements;
  std::vector<DeviceVerdict> devices;  // one per GPU checked, in the order of the options
  std::vector<Finding> findings;       // the health findings of the GPUs checked (health.hpp)
  Verdict verdict = Verdict::healthy;  // the group's: its worst device or link
  double threshold = 0.8;
  double seconds = 0;  // wall time the preflight took

  // nubo-smi check's exit status: 0 healthy, 4 degraded, 5 unusable.
  int exit_status() const noexcept;
  // The verdict on a GPU; nullptr when it was not checked.
  const DeviceVerdict* find(int device) const;
  // As JSON (schema: docs/preflight.schema.json), and back: from_json reads what to_json
  // wrote, e.g. a file given to nubo-cost plan --preflight; errors name `source` and the field.
  std::string to_json() const;
  static PreflightReport from_json(std::string_view text, const std::string& source);
  // from_json of a file (nubo-smi check --out); errors name the file.
  static PreflightReport load(const std::string& path);
};

// `request` with every GPU the preflight did not find healthy left out, naming why
// ("GPU 3: host-to-device at 0.50 of expected (...)"). GPUs it did not check stay in.
NUBO_API SelectRequest exclude_unhealthy(SelectRequest request, const PreflightReport& preflight);

// Measures the GPUs of `report` (and the host) against their models. Errors with the options
// are Error(invalid_argument); a device that fails is an unusable verdict in the report, not
// an exception.
NUBO_API PreflightReport preflight(const DeviceReport& report,
                                   const PreflightOptions& options = {});

}  // namespace nubo::device
