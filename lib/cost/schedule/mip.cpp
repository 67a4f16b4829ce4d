#include "cost/schedule/mip.hpp"

#include <coin/Cbc_C_Interface.h>

#include <memory>
#include <mutex>
#include <string>

namespace nubo::cost::schedule_detail {
namespace {

// CBC keeps some state of its own between models (its message handlers and the parameters of
// its driver): one solve at a time.
std::mutex& cbc_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

int Mip::add_row(double lower, double upper) {
  row_lower_.push_back(lower);
  row_upper_.push_back(upper);
  return static_cast<int>(row_lower_.size()) - 1;
}

int Mip::add_column(double cost, double lower, double upper, bool integer,
                    const std::vector<std::pair<int, double>>& entries) {
  cost_.push_back(cost);
  lower_.push_back(lower);
  upper_.push_back(upper);
  integer_.push_back(integer ? 1 : 0);
  entries_.push_back(entries);
  return static_cast<int>(cost_.size()) - 1;
}

Mip::Result Mip::solve(double time_limit_s, const std::vector<double>& start) const {
  // The columns in CBC's compressed sparse form.
  std::vector<CoinBigIndex> starts{0};
  std::vector<int> index;
  std::vector<double> value;
  for (const auto& column : entries_) {
    for (const auto& [row, coefficient] : column) {
      index.push_back(row);
      value.push_back(coefficient);
    }
    starts.push_back(static_cast<CoinBigIndex>(index.size()));
  }
  std::lock_guard lock(cbc_mutex());
  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model*)> model(Cbc_newModel(), Cbc_deleteModel);
  Cbc_loadProblem(model.get(), columns(), static_cast<int>(row_lower_.size()), starts.data(),
                  index.data(), value.data(), lower_.data(), upper_.data(), cost_.data(),
                  row_lower_.data(), row_upper_.data());
  bool any_integer = false;
  for (int c = 0; c < columns(); ++c)
    if (integer_[static_cast<std::size_t>(c)]) {
      Cbc_setInteger(model.get(), c);
      any_integer = true;
    }
  Cbc_setLogLevel(model.get(), 0);
  Cbc_setMaximumSeconds(model.get(), time_limit_s);
  Cbc_setAllowableGap(model.get(), 1e-7);
  Cbc_setAllowableFractionGap(model.get(), 1e-9);
  Cbc_setParameter(model.get(), "threads", "1");
  if (!start.empty() && any_integer) {
    std::vector<int> columns_set;
    std::vector<double> values_set;
    for (int c = 0; c < columns(); ++c)
      if (start[static_cast<std::size_t>(c)] != 0) {
        columns_set.push_back(c);
        values_set.push_back(start[static_cast<std::size_t>(c)]);
      }
    Cbc_setMIPStartI(model.get(), static_cast<int>(columns_set.size()), columns_set.data(),
                     values_set.data());
  }
  Cbc_solve(model.get());
  Result r;
  const double* solution = Cbc_getColSolution(model.get());
  r.optimal = Cbc_isProvenOptimal(model.get()) != 0;
  r.solved = solution != nullptr && (r.optimal || Cbc_numberSavedSolutions(model.get()) > 0 ||
                                     Cbc_bestSolution(model.get()) != nullptr);
  if (r.solved) {
    r.values.assign(solution, solution + columns());
    r.objective = Cbc_getObjValue(model.get());
  }
  r.bound = any_integer ? Cbc_getBestPossibleObjValue(model.get()) : r.objective;
  if (r.optimal) r.bound = r.objective;
  return r;
}

}  // namespace nubo::cost::schedule_detail
