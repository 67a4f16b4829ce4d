// From price quotes to catalog rows, for every source that lists instances: the GPU is matched
// to the model table, each quote is checked (checks.hpp), and the quotes of one instance in one
// region (one per availability zone, or an on-demand and a spot line) become one row whose spot
// price is the zones' median, with the lowest kept beside it.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cost/sources/source.hpp"
#include "device/backend/gpu_catalog.hpp"

namespace nubo::cost::sources {

struct Quote {
  std::string name, region, zone;
  std::string gpu_name;
  std::string hint;  // more of what the source says of the GPU ("A100 PCIe"), for match_gpu
  double gpus = 0;
  double gpu_memory_gib = 0;  // per GPU as the source states it; 0: not stated
  double vcpus = 0, memory_gib = 0;
  double on_demand = -1, spot = -1;  // $/h for the instance; < 0: not quoted
  std::string where;                 // "skypilot/aws.csv:120"
};

// A number a price list gives: -1 when empty; `problem` set, naming the column, when malformed.
double quote_number(std::string_view text, const char* column, std::string& problem);

class RowBuilder {
 public:
  RowBuilder(const Input& input, Imported& out) : input_(input), out_(out) {}
  // Checks a quote; one that fails is reported in out.skipped with its reason.
  void add(const Quote& quote);
  // Collapses the quotes of each (instance, region) into one row.
  void finish();

 private:
  struct Group {
    Quote first;
    const nubo::detail::GpuModel* gpu = nullptr;
    std::vector<double> on_demand, spot;
  };
  void skip(const Quote& q, std::string reason);
  // The GPU the instance facts say it has, when the source names another (said once per name).
  const nubo::detail::GpuModel* corrected_gpu(const Quote& q, const nubo::detail::GpuModel& said);

  const Input& input_;
  Imported& out_;
  // The groups in the order the file first names them, found by "name\nregion".
  std::vector<Group> groups_;
  std::unordered_map<std::string, std::size_t> group_of_;
  // "name\nregion\nzone\nprices" (any case) -> where it was first seen: a second is a duplicate.
  std::unordered_map<std::string, std::string> seen_;
  std::unordered_set<std::string> corrected_;  // instance names already reported
};

}  // namespace nubo::cost::sources
