#include "cost/sources/gpu_names.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "common/csv.hpp"
#include "common/text.hpp"

namespace nubo::embedded {
std::string_view cost_gpu_aliases_csv();  // generated from lib/cost/sources/gpu_aliases.csv
}

namespace nubo::cost::sources {
namespace {

// A stated memory within this fraction of the table's is the same GPU (sources round: "80 GB"
// for 79.6 GiB, 141 GB for 140 GiB); further off, the row contradicts the table.
constexpr double kMemoryTolerance = 0.12;

struct Alias {
  std::string instance_contains;  // lower case; "": any
  const nubo::detail::GpuModel* model = nullptr;
};

// "NVIDIA A100-SXM4 80GB" -> "A100SXM480GB": case, spaces, '-' and '_' never tell GPUs apart.
std::string normalise(std::string_view name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (out.starts_with("NVIDIA")) out.erase(0, 6);
  if (out.starts_with("TESLA")) out.erase(0, 5);
  return out;
}

const std::unordered_map<std::string, std::vector<Alias>>& aliases() {
  static const auto table = [] {
    std::unordered_map<std::string, std::vector<Alias>> t;
    const auto& gpus = nubo::detail::GpuCatalog::builtin();
    // Every model's own key and CUDA name are aliases too.
    for (const auto& m : gpus.models()) {
      t[normalise(m.model)].push_back({"", &m});
      t[normalise(m.cuda_name)].push_back({"", &m});
    }
    auto csv = csv::Table::parse(embedded::cost_gpu_aliases_csv(), "embedded gpu_aliases.csv",
                                 {"alias", "instance_contains", "model"});
    for (const auto& row : csv.rows()) {
      const auto* model = gpus.find(row.str("model"));
      if (!model) row.fail("model: unknown GPU model '" + row.str("model") + "'");
      t[normalise(row.str("alias"))].push_back({text::lower(row.str("instance_contains")), model});
    }
    return t;
  }();
  return table;
}

double gib(const nubo::detail::GpuModel& m) {
  return static_cast<double>(m.memory_bytes) / double(1 << 30);
}

std::string fmt_gib(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f GiB", v);
  return buf;
}

}  // namespace

GpuMatch match_gpu(std::string_view name, double memory_gib, std::string_view hint) {
  GpuMatch out;
  const auto& table = aliases();
  auto it = table.find(normalise(name));
  if (it == table.end() || name.empty()) {
    out.problem = "unknown GPU '" + std::string(name) + "'";
    return out;
  }
  const auto inst = text::lower(hint);
  // The candidates this instance can be: an alias that names a part of the instance's name
  // (".._pcie") wins over one that does not.
  std::vector<const Alias*> candidates;
  for (const auto& a : it->second)
    if (!a.instance_contains.empty() && inst.find(a.instance_contains) != std::string::npos)
      candidates.push_back(&a);
  if (candidates.empty())
    for (const auto& a : it->second)
      if (a.instance_contains.empty()) candidates.push_back(&a);
  if (candidates.empty()) {
    out.problem = "unknown GPU '" + std::string(name) + "'";
    return out;
  }
  // Memory tells variants apart ("A100" with 80 GB is the 80 GB one): the closest one.
  const Alias* best = candidates.front();
  if (memory_gib > 0)
    for (const auto* a : candidates)
      if (std::abs(gib(*a->model) - memory_gib) < std::abs(gib(*best->model) - memory_gib))
        best = a;
  out.model = best->model;
  if (memory_gib > 0 &&
      std::abs(memory_gib - gib(*out.model)) > kMemoryTolerance * gib(*out.model)) {
    out.problem = "GPU memory " + fmt_gib(memory_gib) + " disagrees with " + out.model->model +
                  "'s " + fmt_gib(gib(*out.model)) + " in the GPU table";
    out.model = nullptr;
  }
  return out;
}

}  // namespace nubo::cost::sources
