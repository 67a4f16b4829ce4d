// The profile a nubo-train run writes (docs/profile.schema.json), read and written here. Unknown
// keys are ignored so that newer trainers can add fields; known ones must have the right type and
// range, and every error names the file and the field.

#include <nlohmann/json.hpp>

#include "common/json.hpp"
#include "common/small_file.hpp"
#include "common/text.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/version.h"

namespace nubo::cost {
namespace {

constexpr const char* kSchema = "nubo-profile/1";

class Reader {
 public:
  Reader(const nlohmann::json& root, std::string source)
      : root_(root), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw Error(Errc::invalid_argument, "profile " + source_ + ": " + field + ": " + why);
  }

  // The value at "a.b", or nullptr when absent (or null).
  const nlohmann::json* at(const std::string& path) const {
    const nlohmann::json* j = &root_;
    for (auto part : text::split(path, '.')) {
      if (!j->is_object()) fail(path, "expected an object on the way");
      auto it = j->find(std::string(part));
      if (it == j->end() || it->is_null()) return nullptr;
      j = &*it;
    }
    return j;
  }

  double number(const std::string& path, double min, double max, bool required) const {
    const auto* j = at(path);
    if (!j) {
      if (required) fail(path, "missing (required)");
      return 0;
    }
    if (!j->is_number()) fail(path, std::string("expected a number, got ") + j->type_name());
    double v = j->get<double>();
    if (!(v >= min && v <= max))
      fail(path, "out of range: " + j->dump() + " is not in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
    return v;
  }

  std::string str(const std::string& path, bool required) const {
    const auto* j = at(path);
    if (!j) {
      if (required) fail(path, "missing (required)");
      return "";
    }
    if (!j->is_string()) fail(path, std::string("expected a string, got ") + j->type_name());
    return j->get<std::string>();
  }

 private:
  const nlohmann::json& root_;
  std::string source_;
};

}  // namespace

Profile Profile::parse(std::string_view json, const std::string& source) {
  const auto root = nubo::json::parse(json, "profile " + source);
  if (!root.is_object())
    throw Error(Errc::invalid_argument, "profile " + source + ": expected a JSON object");
  Reader r(root, source);
  auto schema = r.str("schema", true);
  if (schema != kSchema)
    r.fail("schema", "'" + schema + "' is not '" + kSchema + "' (docs/profile.schema.json)");
  constexpr double kBig = 1e30;
  Profile p;
  p.source = source;
  p.backend = r.str("devices.backend", true);
  if (p.backend != "cpu" && p.backend != "sim" && p.backend != "cuda")
    r.fail("devices.backend", "expected cpu, sim or cuda, got '" + p.backend + "'");
  p.device_model = r.str("devices.model", true);
  p.devices = static_cast<int>(r.number("devices.count", 1, 1e6, true));
  if (r.at("devices.processes"))
    p.processes = static_cast<int>(r.number("devices.processes", 1, 1e6, false));
  p.device_peak_tflops = r.number("devices.peak_tflops", 0, 1e6, false);
  p.host_threads = static_cast<int>(r.number("devices.host_threads", 0, 1e6, false));
  p.host_cpus = static_cast<int>(r.number("devices.host_cpus", 0, 1e6, false));
  try {
    p.dtype = parse_dtype(r.str("dtype", true));
  } catch (const Error& e) {
    r.fail("dtype", e.what());
  }
  p.global_batch = r.number("global_batch", 1, 1e12, true);
  p.steps = r.number("steps", 0, 1e15, false);
  p.step_time_s = r.number("per_step.wall_s", 0, 1e9, false);
  p.compute_time_s = r.number("per_step.compute_s", 0, 1e9, true);
  if (p.compute_time_s <= 0) r.fail("per_step.compute_s", "must be > 0");
  p.communication_time_s = r.number("per_step.communication_s", 0, 1e9, false);
  p.gemm_time_s = r.number("per_step.gemm_s", 0, 1e9, false);
  if (p.gemm_time_s > p.compute_time_s)
    r.fail("per_step.gemm_s", "is more than per_step.compute_s, of which it is a part");
  p.allreduce_bytes = r.number("per_step.allreduce_bytes", 0, kBig, true);
  p.samples_per_s = r.number("samples_per_s", 0, 1e15, true);
  p.checkpoint_time_s = r.number("checkpoint.time_s", 0, 1e9, false);
  p.checkpoint_stall_s = r.number("checkpoint.stall_s", 0, 1e9, false);
  p.checkpoint_interval_s = r.number("checkpoint.interval_s", 0, 1e9, false);
  p.checkpoint_expected_waste = r.number("checkpoint.expected_waste", 0, 1e6, false);
  p.checkpoint_bytes = r.number("checkpoint.bytes", 0, kBig, false);
  p.dataset_samples = r.number("dataset.samples", 1, 1e15, true);
  p.dataset_bytes = r.number("dataset.bytes", 0, kBig, false);
  p.parameter_bytes = r.number("model.parameter_bytes", 0, kBig, false);
  p.parameters = r.number("model.parameters", 0, kBig, false);
  p.zero_stage = static_cast<int>(r.number("model.zero_stage", 0, 3, false));
  if (r.at("model.optimizer")) {
    p.optimizer = r.str("model.optimizer", false);
    if (p.optimizer != "sgd" && p.optimizer != "adam")
      r.fail("model.optimizer", "is \"" + p.optimizer + "\"; sgd or adam");
  }
  p.memory_per_device_bytes = r.number("memory_per_device_bytes", 0, kBig, false);
  return p;
}

Profile Profile::load(const std::string& path) {
  return parse(files::read_small_file(path, 16u << 20, "profile").bytes, path);
}

std::string Profile::to_json() const {
  nlohmann::json j = {
      {"schema", kSchema},
      {"nubo_version", std::to_string(NUBO_VERSION_MAJOR) + "." +
                           std::to_string(NUBO_VERSION_MINOR) + "." +
                           std::to_string(NUBO_VERSION_PATCH)},
      {"devices",
       {{"backend", backend},
        {"model", device_model},
        {"count", devices},
        {"processes", processes}}},
      {"dtype", dtype_name(dtype)},
      {"global_batch", global_batch},
      {"steps", steps},
      {"per_step",
       {{"wall_s", step_time_s},
        {"compute_s", compute_time_s},
        {"communication_s", communication_time_s},
        {"allreduce_bytes", allreduce_bytes}}},
      {"samples_per_s", samples_per_s},
      {"checkpoint",
       {{"time_s", checkpoint_time_s},
        {"stall_s", checkpoint_stall_s},
        {"interval_s", checkpoint_interval_s},
        {"expected_waste", checkpoint_expected_waste},
        {"bytes", checkpoint_bytes}}},
      {"dataset", {{"samples", dataset_samples}, {"bytes", dataset_bytes}}},
      {"model",
       {{"parameter_bytes", parameter_bytes},
        {"parameters", parameters},
        {"zero_stage", zero_stage},
        {"optimizer", optimizer}}},
      {"memory_per_device_bytes", memory_per_device_bytes},
  };
  if (device_peak_tflops > 0) j["devices"]["peak_tflops"] = device_peak_tflops;
  if (host_threads > 0) j["devices"]["host_threads"] = host_threads;
  if (host_cpus > 0) j["devices"]["host_cpus"] = host_cpus;
  if (gemm_time_s > 0) j["per_step"]["gemm_s"] = gemm_time_s;
  return j.dump(2);
}

}  // namespace nubo::cost
