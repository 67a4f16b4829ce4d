// A training workload from named text fields: nubo-cost plan's flags and a queue file's job
// workloads read through this one function, so that both take the same fields, units and rules.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/text.hpp"
#include "cost/workload_table.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace nubo::cost {
namespace {

// The fields read here besides the numeric ones of the table.
constexpr std::string_view kOtherFields[] = {"model-bytes", "optimizer", "zero", "profile",
                                             "dtype"};

std::vector<std::string> known_fields() {
  std::vector<std::string> names;
  for (const auto& f : detail::workload_field_table())
    if (!f.flag.empty()) names.emplace_back(f.flag);
  for (std::string_view other : kOtherFields) names.emplace_back(other);
  std::sort(names.begin(), names.end());
  return names;
}

bool is_field(std::string_view name) {
  for (std::string_view other : kOtherFields)
    if (other == name) return true;
  return detail::find_workload_field(name) != nullptr;
}

}  // namespace

Workload workload_from_fields(const std::map<std::string, std::string>& fields,
                              const std::string& where) {
  for (const auto& [name, value] : fields)
    if (!is_field(name))
      throw Error(Errc::invalid_argument, where + name + ": not a workload field (known: " +
                                              text::join(known_fields(), ", ") + ")");
  const auto get = [&](std::string_view name) -> const std::string* {
    const auto it = fields.find(std::string(name));
    return it == fields.end() || it->second.empty() ? nullptr : &it->second;
  };
  const auto what = [&](std::string_view name) { return where + std::string(name); };
  // A numeric field of the table, read as its text says, then checked against its range once.
  const auto read = [&](const detail::WorkloadField& f) {
    const std::string& text = *get(f.flag);
    double v = 0;
    switch (f.text) {
      case detail::FieldText::number:
        v = text::parse_double(text, what(f.flag), std::numeric_limits<double>::lowest(),
                               std::numeric_limits<double>::max());
        break;
      case detail::FieldText::count:
        v = parse_count(text, what(f.flag));
        break;
      case detail::FieldText::bytes:
        v = static_cast<double>(parse_bytes(text, what(f.flag)));
        break;
      case detail::FieldText::duration:
        v = parse_duration(text, what(f.flag));
        break;
    }
    detail::check_workload_field(f, v, what(f.flag), true);
    return v;
  };

  Workload w;
  const auto* profile = get("profile");
  if (profile) {
    const auto* epochs = detail::find_workload_field("epochs");
    w = Workload::from_profile(Profile::load(*profile), get("epochs") ? read(*epochs) : 1);
  } else {
    if (get("dtype")) w.dtype = parse_dtype(*get("dtype"));
    if (get("optimizer")) w.optimizer = parse_optimizer(*get("optimizer"));
    if (const auto* zero = get("zero")) {
      if (*zero == "auto") {
        w.sharding = -1;
      } else {
        const double stage = text::parse_double(*zero, what("zero"), 0, 3);
        if (stage != std::floor(stage))
          throw Error(Errc::invalid_argument, what("zero") + ": 0, 1, 2, 3 or auto, not " + *zero);
        w.sharding = static_cast<int>(stage);
      }
    }
  }
  // With a profile, the model-described fields are not read: the profile measured them.
  for (const auto& f : detail::workload_field_table())
    if (!f.flag.empty() && get(f.flag) && !(profile && f.analytic)) w.*f.value = read(f);
  if (!profile) {
    if (get("model-bytes"))
      w.parameters = static_cast<double>(parse_bytes(*get("model-bytes"), what("model-bytes"))) /
                     static_cast<double>(dtype_size(w.dtype));
    const bool by_flops = w.total_flops > 0 || (w.flops_per_sample > 0 && get("samples"));
    const bool by_model =
        w.parameters > 0 && (w.tokens > 0 || (get("samples") && w.sequence_length > 0));
    if (!by_flops && !by_model)
      throw Error(Errc::invalid_argument,
                  where.empty() || where == "--"
                      ? "describe the workload: --params 7B with --tokens 2e9 (or --samples with "
                        "--seq-len), --flops N, --flops-per-sample N with --samples N, or "
                        "--profile run.json (from nubo-train)"
                      : where.substr(0, where.size() - (where.back() == '.')) +
                            ": describe the workload: params with tokens (or samples with "
                            "seq-len), flops, flops-per-sample with samples, or profile");
  }
  return w;
}

}  // namespace nubo::cost
