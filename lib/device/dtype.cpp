// Sizes and names of the element types and reduction operators (include/nubo/dtype.hpp).
#include "nubo/dtype.hpp"

#include <cctype>
#include <string>

#include "nubo/error.hpp"

namespace nubo {

std::size_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f16:
      return 2;
    case DType::bf16:
      return 2;
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
    case DType::tf32:
      return 0;  // a compute precision: no buffer holds it
  }
  return 0;  // a value outside the enum (e.g. from the C ABI): callers reject size 0
}

std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::tf32:
      return "tf32";
  }
  return "unknown";
}

DType parse_dtype(std::string_view text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "f32" || t == "fp32" || t == "float32") return DType::f32;
  if (t == "tf32") return DType::tf32;
  if (t == "f16" || t == "fp16" || t == "float16" || t == "half") return DType::f16;
  if (t == "bf16" || t == "bfloat16") return DType::bf16;
  if (t == "i32" || t == "int32") return DType::i32;
  if (t == "i64" || t == "int64") return DType::i64;
  throw Error(Errc::invalid_argument,
              "unknown dtype '" + std::string(text) + "': use f32, tf32, f16, bf16, i32 or i64");
}

std::string_view reduce_op_name(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::avg:
      return "avg";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
  }
  return "unknown";
}

}  // namespace nubo
