// nubo_units.h over nubo/units.hpp: the one reading of sizes and durations.
#include "nubo/units.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/dtype.hpp"
#include "nubo/error.hpp"
#include "text_out.hpp"

namespace {

// nubo_dtype is nubo::DType, value for value.
static_assert(NUBO_DTYPE_F32 == static_cast<int>(nubo::DType::f32));
static_assert(NUBO_DTYPE_F16 == static_cast<int>(nubo::DType::f16));
static_assert(NUBO_DTYPE_BF16 == static_cast<int>(nubo::DType::bf16));
static_assert(NUBO_DTYPE_I32 == static_cast<int>(nubo::DType::i32));
static_assert(NUBO_DTYPE_I64 == static_cast<int>(nubo::DType::i64));
static_assert(NUBO_DTYPE_TF32 == static_cast<int>(nubo::DType::tf32));

const char* name_of(const char* what) {
  return what != nullptr ? what : "value";
}

}  // namespace

extern "C" {

nubo_status nubo_units_parse_bytes(const char* text, const char* what, uint64_t* bytes) {
  return nubo::capi::guard("nubo_units_parse_bytes", [&] {
    nubo::capi::require(text, "text");
    *nubo::capi::require(bytes, "bytes") = nubo::parse_bytes(text, name_of(what));
  });
}

nubo_status nubo_units_parse_rate(const char* text, const char* what, double* bytes_per_second) {
  return nubo::capi::guard("nubo_units_parse_rate", [&] {
    nubo::capi::require(text, "text");
    *nubo::capi::require(bytes_per_second, "bytes_per_second") =
        nubo::parse_rate(text, name_of(what));
  });
}

nubo_status nubo_units_parse_duration(const char* text, const char* what, double* seconds) {
  return nubo::capi::guard("nubo_units_parse_duration", [&] {
    nubo::capi::require(text, "text");
    *nubo::capi::require(seconds, "seconds") = nubo::parse_duration(text, name_of(what));
  });
}

nubo_status nubo_units_parse_count(const char* text, const char* what, double* count) {
  return nubo::capi::guard("nubo_units_parse_count", [&] {
    nubo::capi::require(text, "text");
    *nubo::capi::require(count, "count") = nubo::parse_count(text, name_of(what));
  });
}

nubo_status nubo_units_format_bytes(double bytes, int decimals, char* buf, size_t capacity,
                                    size_t* needed) {
  return nubo::capi::guard("nubo_units_format_bytes", [&] {
    if (decimals < 0 || decimals > 6)
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "decimals is " + std::to_string(decimals) + ": give 0 to 6");
    nubo::capi::copy_text_out(nubo::format_bytes(bytes, decimals), "the size", buf, capacity,
                              needed);
  });
}

nubo_status nubo_units_format_duration(double seconds, char* buf, size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_units_format_duration", [&] {
    nubo::capi::copy_text_out(nubo::format_duration(seconds), "the duration", buf, capacity,
                              needed);
  });
}

nubo_status nubo_units_parse_dtype(const char* text, nubo_dtype* out) {
  return nubo::capi::guard("nubo_units_parse_dtype", [&] {
    nubo::capi::require(text, "text");
    *nubo::capi::require(out, "out") = static_cast<nubo_dtype>(nubo::parse_dtype(text));
  });
}

const char* nubo_units_dtype_name(nubo_dtype dtype) {
  // dtype_name's views are of string literals, so NUL-terminated.
  return nubo::dtype_name(static_cast<nubo::DType>(dtype)).data();
}

}  // extern "C"
