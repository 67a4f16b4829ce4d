// A mixed-integer (or linear) program for COIN-OR CBC, built column by column: the one place
// nubo calls the solver, so that the schedulers speak of jobs and slots, not of CBC's API. CBC
// is loaded when a program is first solved, not linked.
// CBC is EPL-licensed and solves these scheduling programs far faster than GLPK's branch and
// bound (docs/schedule.md, "Method").
#pragma once

#include <limits>
#include <utility>
#include <vector>

namespace nubo::cost::schedule_detail {

class Mip {
 public:
  // Whether CBC can be loaded (solve() says why not).
  static bool available();
  // A row: lower <= sum <= upper.
  int add_row(double lower, double upper);
  // A column with its objective coefficient, bounds and (row, coefficient) entries.
  int add_column(double cost, double lower, double upper, bool integer,
                 const std::vector<std::pair<int, double>>& entries);
  int columns() const { return static_cast<int>(cost_.size()); }

  struct Result {
    bool solved = false;   // a feasible solution was found
    bool optimal = false;  // and proven optimal
    double objective = 0;
    double bound = 0;  // a proven lower bound on the objective
    std::vector<double> values;
  };
  // Minimises, within `time_limit_s` of wall time; `cutoff`: the cost of a solution already
  // known (the heuristic's), so that only better ones are searched for; +inf: none.
  Result solve(double time_limit_s, double cutoff = std::numeric_limits<double>::infinity()) const;

 private:
  std::vector<double> cost_, lower_, upper_, row_lower_, row_upper_;
  std::vector<char> integer_;
  std::vector<std::vector<std::pair<int, double>>> entries_;
};

}  // namespace nubo::cost::schedule_detail
