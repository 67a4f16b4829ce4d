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

OpRecord record_of(const Op& call, std::uint64_t seq, std::uint8_t flag) noexcept {
  OpRecord r{};
  r.seq = seq;
  r.count = call.count;
  r.root = call.root;
  r.kind = static_cast<std::uint8_t>(call.kind);
  r.type = static_cast<std::uint8_t>(call.type);
  r.op = static_cast<std::uint8_t>(call.op);
  r.flag = flag;
  return r;
}

Op call_of(const OpRecord& r) noexcept {
  Op op;
  op.kind = static_cast<OpKind>(r.kind);
  op.type = static_cast<DType>(r.type);
  op.op = static_cast<ReduceOp>(r.op);
  op.root = r.root;
  op.count = static_cast<std::size_t>(r.count);
  return op;
}

std::string difference(const Op& call, std::uint64_t seq, const OpRecord& theirs) {
  if (theirs.seq != seq) {
    return "is at collective #" + std::to_string(theirs.seq) + " (" + describe(call_of(theirs)) +
           ")";
  }
  if (!same_call(call, call_of(theirs))) return "called " + describe(call_of(theirs));
  return {};
}

}  // namespace nubo::parallel
