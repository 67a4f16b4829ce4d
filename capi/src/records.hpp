// The C structs of a handle's C++ values, made once when the handle is: readers of the handle
// only copy (so concurrent readers are safe), and the text the structs point to lives exactly as
// long as the handle.
#pragma once

#include <cstddef>
#include <vector>

#include "guard.hpp"
#include "result_fields.hpp"
#include "sized_struct.hpp"

namespace nubo::capi {

template <class C>
class Records {
 public:
  Records() = default;
  // `convert(value, texts)` is a generated to_<struct> (generated/results.hpp). The values must
  // outlive the records: their strings are borrowed.
  template <class Values, class Convert>
  Records(const Values& values, Convert convert) {
    for (const auto& v : values) rows_.push_back(convert(v, texts_));
  }
  // A copy would point into the original's text.
  Records(const Records&) = delete;
  Records& operator=(const Records&) = delete;
  Records(Records&&) noexcept = default;
  Records& operator=(Records&&) noexcept = default;

  std::size_t size() const { return rows_.size(); }

  // Copies row `index` into the caller's struct, as far as its struct_size reaches; `owner` and
  // `items` name them in the error for an index out of range ("the plan", "exclusions").
  void read(std::size_t index, C* out, const char* owner, const char* items,
            const char* type_name) const {
    require(out, "out");
    write_sized(rows_[require_index(index, rows_.size(), owner, items)], out, "out", type_name);
  }

 private:
  std::vector<C> rows_;
  Texts texts_;
};

}  // namespace nubo::capi
