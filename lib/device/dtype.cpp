// Sizes and names of the element types and reduction operators (include/nubo/dtype.hpp).
#include "nubo/dtype.hpp"

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
  }
  return "unknown";
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
