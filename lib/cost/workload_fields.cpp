// A training workload from named text fields: nubo-cost plan's flags and a queue file's job
// workloads read through this one function, so that both take the same fields, units and rules.
#include <cmath>
#include <set>

#include "common/text.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace nubo::cost {
namespace {

const std::set<std::string, std::less<>>& known_fields() {
  static const std::set<std::string, std::less<>> names{"params",
                                                        "model-bytes",
                                                        "tokens",
                                                        "seq-len",
                                                        "micro-batch",
                                                        "optimizer",
                                                        "zero",
                                                        "flops",
                                                        "flops-per-sample",
                                                        "samples",
                                                        "profile",
                                                        "epochs",
                                                        "dtype",
                                                        "mfu",
                                                        "batch",
                                                        "params-bytes",
                                                        "gpu-memory",
                                                        "dataset",
                                                        "compression",
                                                        "checkpoint-size",
                                                        "checkpoint-every",
                                                        "egress",
                                                        "keep-months",
                                                        "overlap"};
  return names;
}

}  // namespace

Workload workload_from_fields(const std::map<std::string, std::string>& fields,
                              const std::string& where) {
  for (const auto& [name, value] : fields)
    if (!known_fields().contains(name))
      throw Error(Errc::invalid_argument,
                  where + name + ": not a workload field (known: " +
                      text::join({known_fields().begin(), known_fields().end()}, ", ") + ")");
  const auto get = [&](const char* name) -> const std::string* {
    const auto it = fields.find(name);
    return it == fields.end() || it->second.empty() ? nullptr : &it->second;
  };
  const auto what = [&](const char* name) { return where + name; };
  const auto number = [&](const char* name, double min, double max) {
    return text::parse_double(*get(name), what(name), min, max);
  };
  const auto bytes = [&](const char* name) {
    return static_cast<double>(parse_bytes(*get(name), what(name)));
  };
  const auto count = [&](const char* name) { return parse_count(*get(name), what(name)); };

  Workload w;
  const double epochs = get("epochs") ? number("epochs", 1e-9, 1e9) : 1;
  if (const auto* profile = get("profile")) {
    w = Workload::from_profile(Profile::load(*profile), epochs);
  } else {
    if (get("dtype")) w.dtype = parse_dtype(*get("dtype"));
    if (get("mfu")) w.mfu = number("mfu", 1e-6, 1);
    if (get("params")) w.parameters = count("params");
    if (get("model-bytes"))
      w.parameters = bytes("model-bytes") / static_cast<double>(dtype_size(w.dtype));
    if (get("tokens")) w.tokens = count("tokens");
    if (get("seq-len")) w.sequence_length = number("seq-len", 1, 1e9);
    if (get("micro-batch")) w.micro_batch = number("micro-batch", 1, 1e9);
    if (get("optimizer")) w.optimizer = parse_optimizer(*get("optimizer"));
    if (const auto* zero = get("zero")) {
      if (*zero == "auto") {
        w.sharding = -1;
      } else {
        const double stage = number("zero", 0, 3);
        if (stage != std::floor(stage))
          throw Error(Errc::invalid_argument, what("zero") + ": 0, 1, 2, 3 or auto, not " + *zero);
        w.sharding = static_cast<int>(stage);
      }
    }
    if (get("flops")) {
      w.total_flops = number("flops", 1, 1e40);
    } else if (get("flops-per-sample") && get("samples")) {
      w.flops_per_sample = number("flops-per-sample", 1e-9, 1e30);
    } else if (w.parameters <= 0 ||
               (w.tokens <= 0 && (!get("samples") || w.sequence_length <= 0))) {
      throw Error(Errc::invalid_argument,
                  where.empty() || where == "--"
                      ? "describe the workload: --params 7B with --tokens 2e9 (or --samples with "
                        "--seq-len), --flops N, --flops-per-sample N with --samples N, or "
                        "--profile run.json (from nubo-train)"
                      : where.substr(0, where.size() - (where.back() == '.')) +
                            ": describe the workload: params with tokens (or samples with "
                            "seq-len), flops, flops-per-sample with samples, or profile");
    }
  }
  if (get("samples")) w.samples = number("samples", 0, 1e18);
  w.epochs = epochs;
  if (get("batch")) w.global_batch = number("batch", 0, 1e12);
  if (get("params-bytes")) w.parameter_bytes = bytes("params-bytes");
  if (get("gpu-memory")) w.memory_per_gpu_bytes = bytes("gpu-memory");
  if (get("dataset")) w.dataset_bytes = bytes("dataset");
  if (get("checkpoint-size")) w.checkpoint_bytes = bytes("checkpoint-size");
  if (get("checkpoint-every"))
    w.checkpoint_interval_s = parse_duration(*get("checkpoint-every"), what("checkpoint-every"));
  if (get("egress")) w.egress_bytes = bytes("egress");
  if (get("compression")) w.compression_ratio = number("compression", 1e-6, 1);
  if (get("overlap")) w.overlap = number("overlap", 0, 1);
  if (get("keep-months")) w.storage_months_after = number("keep-months", 0, 1200);
  return w;
}

}  // namespace nubo::cost
