#include "cost/schedule/mip.hpp"

#include <coin/Cbc_C_Interface.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "nubo/error.hpp"

namespace nubo::cost::schedule_detail {
namespace {

// CBC's C interface, loaded the first time a schedule is solved. Linked, it would load with
// libnubo in every process (several MB of COIN-OR libraries, and LAPACK, which maps OpenBLAS
// and starts its thread pool: lib/device/host/openblas.hpp says why libnubo loads that lazily).
struct Cbc {
  decltype(&Cbc_newModel) new_model;
  decltype(&Cbc_deleteModel) delete_model;
  decltype(&Cbc_loadProblem) load_problem;
  decltype(&Cbc_setInteger) set_integer;
  decltype(&Cbc_setLogLevel) set_log_level;
  decltype(&Cbc_setMaximumSeconds) set_maximum_seconds;
  decltype(&Cbc_setAllowableGap) set_allowable_gap;
  decltype(&Cbc_setAllowableFractionGap) set_allowable_fraction_gap;
  decltype(&Cbc_setParameter) set_parameter;
  decltype(&Cbc_solve) solve;
  decltype(&Cbc_getColSolution) col_solution;
  decltype(&Cbc_isProvenOptimal) is_proven_optimal;
  decltype(&Cbc_numberSavedSolutions) saved_solutions;
  decltype(&Cbc_bestSolution) best_solution;
  decltype(&Cbc_getObjValue) objective;
  decltype(&Cbc_getBestPossibleObjValue) best_possible;
};

constexpr const char* kCbcLibrary = "libCbcSolver.so.3";

const Cbc& cbc() {
  static const Cbc loaded = [] {
    void* handle = dlopen(kCbcLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      throw Error(Errc::unavailable,
                  std::string("the exact schedule needs COIN-OR CBC (") + kCbcLibrary +
                      ", Debian's coinor-libcbc3): " + (why ? why : "it cannot be loaded"));
    }
    const auto get = [&](auto& out, const char* name) {
      out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(dlsym(handle, name));
      if (!out)
        throw Error(Errc::unavailable, std::string(kCbcLibrary) + " lacks " + name +
                                           ": not the CBC 2.10 C interface nubo was built for");
    };
    Cbc c{};
    get(c.new_model, "Cbc_newModel");
    get(c.delete_model, "Cbc_deleteModel");
    get(c.load_problem, "Cbc_loadProblem");
    get(c.set_integer, "Cbc_setInteger");
    get(c.set_log_level, "Cbc_setLogLevel");
    get(c.set_maximum_seconds, "Cbc_setMaximumSeconds");
    get(c.set_allowable_gap, "Cbc_setAllowableGap");
    get(c.set_allowable_fraction_gap, "Cbc_setAllowableFractionGap");
    get(c.set_parameter, "Cbc_setParameter");
    get(c.solve, "Cbc_solve");
    get(c.col_solution, "Cbc_getColSolution");
    get(c.is_proven_optimal, "Cbc_isProvenOptimal");
    get(c.saved_solutions, "Cbc_numberSavedSolutions");
    get(c.best_solution, "Cbc_bestSolution");
    get(c.objective, "Cbc_getObjValue");
    get(c.best_possible, "Cbc_getBestPossibleObjValue");
    return c;  // the library stays loaded for the process
  }();
  return loaded;
}

// CBC keeps some state of its own between models (its message handlers and the parameters of
// its driver): one solve at a time.
std::mutex& cbc_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

bool Mip::available() {
  try {
    cbc();
    return true;
  } catch (const Error&) {
    return false;
  }
}

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

Mip::Result Mip::solve(double time_limit_s, double cutoff) const {
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
  const auto& c = cbc();
  std::lock_guard lock(cbc_mutex());
  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model*)> model(c.new_model(), c.delete_model);
  c.load_problem(model.get(), columns(), static_cast<int>(row_lower_.size()), starts.data(),
                 index.data(), value.data(), lower_.data(), upper_.data(), cost_.data(),
                 row_lower_.data(), row_upper_.data());
  bool any_integer = false;
  for (int col = 0; col < columns(); ++col)
    if (integer_[static_cast<std::size_t>(col)]) {
      c.set_integer(model.get(), col);
      any_integer = true;
    }
  c.set_log_level(model.get(), 0);
  // The limit in wall time (CBC counts CPU time otherwise), kept by every phase: CBC 2.10 does
  // not look at its clock while it preprocesses or while it takes a MIP start, which cost these
  // programs up to 100 s past a 5 s limit and crashed it when the limit fell inside them. So no
  // preprocessing, and the known solution's cost as a cutoff rather than a start: the caller
  // keeps that solution when nothing better is found.
  c.set_maximum_seconds(model.get(), std::max(0.01, time_limit_s));
  c.set_parameter(model.get(), "timeMode", "elapsed");
  c.set_parameter(model.get(), "preprocess", "off");
  c.set_allowable_gap(model.get(), 1e-7);
  c.set_allowable_fraction_gap(model.get(), 1e-9);
  c.set_parameter(model.get(), "threads", "1");
  // CBC prunes what cannot improve by its cutoff increment (1e-5 by default): the tie-break of
  // a millionth of a dollar per slot (exact.cpp) would be lost without a finer one.
  c.set_parameter(model.get(), "increment", "1e-9");
  if (any_integer && std::isfinite(cutoff))
    c.set_parameter(model.get(), "cutoff", std::to_string(cutoff).c_str());
  c.solve(model.get());
  Result r;
  const double* solution = c.col_solution(model.get());
  r.optimal = c.is_proven_optimal(model.get()) != 0;
  r.solved = solution != nullptr && (r.optimal || c.saved_solutions(model.get()) > 0 ||
                                     c.best_solution(model.get()) != nullptr);
  if (r.solved) {
    r.values.assign(solution, solution + columns());
    r.objective = c.objective(model.get());
  }
  r.bound = any_integer ? c.best_possible(model.get()) : r.objective;
  if (r.optimal) r.bound = r.objective;
  return r;
}

}  // namespace nubo::cost::schedule_detail
