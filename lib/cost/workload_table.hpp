// A workload's numeric fields, one row each: the name nubo-cost plan's flag and a queue file's
// job field give it, the Workload member that holds it (and that messages name), how its text
// reads, its range and its unit. The reading of named fields (workload_fields.cpp) and the
// model's checks of a Workload made in code (model.cpp) both read this table, so that a range
// is stated once.
#pragma once

#include <span>
#include <string_view>

#include "nubo/cost.hpp"

namespace nubo::cost::detail {

enum class FieldText { number, count, bytes, duration };  // text::parse_double, parse_count, ...

struct WorkloadField {
  std::string_view flag;    // "seq-len": --seq-len, a job's "seq-len"; "": set in code only
  std::string_view member;  // "sequence_length"
  double Workload::*value;
  FieldText text;
  double min, max;        // a given value's range
  bool zero_unset;        // 0, the default, means "not given" and is always allowed
  bool analytic;          // a model-described workload's: unused (and unread) with a profile
  std::string_view unit;  // after the range in messages: "", "bytes", "s", ...
};

std::span<const WorkloadField> workload_field_table();
// The row of `flag`; nullptr when no numeric field has that name.
const WorkloadField* find_workload_field(std::string_view flag) noexcept;
// Error(invalid_argument) "<what>: <member> is <v>; it must lie in [<min>, <max>] <unit>" unless
// `v` is in the field's range, or is 0 where 0 means unset and the value was not `given` as text.
void check_workload_field(const WorkloadField& f, double v, std::string_view what,
                          bool given = false);

}  // namespace nubo::cost::detail
