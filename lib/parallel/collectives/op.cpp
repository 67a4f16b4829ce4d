#include "parallel/collectives/op.hpp"

namespace nubo::parallel {

const char* op_kind_name(OpKind kind) noexcept {
  switch (kind) {
    case OpKind::all_reduce:
      return "all_reduce";
    case OpKind::broadcast:
      return "broadcast";
    case OpKind::all_gather:
      return "all_gather";
    case OpKind::reduce_scatter:
      return "reduce_scatter";
    case OpKind::barrier:
      return "barrier";
  }
  return "unknown collective";
}

std::string describe(const Op& op) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "(" + std::string(...).
  std::string s = op_kind_name(op.kind);
  if (op.kind == OpKind::barrier) return s;
  if (op.kind == OpKind::all_reduce || op.kind == OpKind::reduce_scatter) {
    s.append("(").append(reduce_op_name(op.op)).append(")");
  }
  if (op.kind == OpKind::broadcast) s.append(" from rank ").append(std::to_string(op.root));
  s.append(" of ").append(std::to_string(op.count)).append(" x ").append(dtype_name(op.type));
  return s;
}

bool same_call(const Op& a, const Op& b) noexcept {
  if (a.kind != b.kind) return false;
  if (a.kind == OpKind::barrier) return true;
  if (a.count != b.count || a.type != b.type) return false;
  if ((a.kind == OpKind::all_reduce || a.kind == OpKind::reduce_scatter) && a.op != b.op) {
    return false;
  }
  return a.kind != OpKind::broadcast || a.root == b.root;
}

}  // namespace nubo::parallel
