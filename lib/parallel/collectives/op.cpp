#include "parallel/collectives/op.hpp"

namespace nubo::parallel {

const char* op_kind_name(OpKind kind) noexcept {
  const OpTraits* t = traits_of(kind);
  return t ? t->name : "unknown collective";
}

std::string describe(const Op& op) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "(" + std::string(...).
  std::string s = op_kind_name(op.kind);
  const OpTraits* t = traits_of(op.kind);
  if (t && !t->moves_data) return s;
  if (t && t->reduces) s.append("(").append(reduce_op_name(op.op)).append(")");
  if (t && t->rooted) s.append(" from rank ").append(std::to_string(op.root));
  s.append(" of ").append(std::to_string(op.count)).append(" x ").append(dtype_name(op.type));
  return s;
}

bool same_call(const Op& a, const Op& b) noexcept {
  if (a.kind != b.kind) return false;
  const OpTraits* t = traits_of(a.kind);
  if (t && !t->moves_data) return true;
  if (a.count != b.count || a.type != b.type) return false;
  if ((!t || t->reduces) && a.op != b.op) return false;
  return (t && !t->rooted) || a.root == b.root;
}

namespace {

// The call a record describes; values outside the known ranges are kept as they are
// (describe() names an unknown kind as such).
std::string describe_record(const CallRecord& r) {
  Op op;
  op.kind = static_cast<OpKind>(r.kind);
  op.type = static_cast<DType>(r.type);
  op.op = static_cast<ReduceOp>(r.op);
  op.root = r.root;
  op.count = static_cast<std::size_t>(r.count);
  return describe(op);
}

}  // namespace

Call call_of(const Op& call, std::uint64_t seq) noexcept {
  const OpTraits* t = traits_of(call.kind);
  const bool moves = !t || t->moves_data;
  CallRecord r{};
  r.seq = seq;
  r.kind = static_cast<std::uint8_t>(call.kind);
  r.count = moves ? call.count : 0;
  r.type = moves ? static_cast<std::uint8_t>(call.type) : 0;
  r.op = moves && (!t || t->reduces) ? static_cast<std::uint8_t>(call.op) : 0;
  r.root = moves && (!t || t->rooted) ? call.root : 0;
  return Call{r, describe_record};
}

}  // namespace nubo::parallel
