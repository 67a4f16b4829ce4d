// The collectives, one row each: a new one is its file (collective.hpp) and a row here.
#include <cstring>
#include <string>

#include "nubo/error.hpp"
#include "parallel/collectives/collective.hpp"

namespace nubo::parallel {
namespace {

constexpr OpTraits kCollectives[] = {
    {OpKind::all_reduce, "all_reduce", true, false, true, all_reduce_collective},
    {OpKind::broadcast, "broadcast", false, true, true, broadcast_collective},
    {OpKind::all_gather, "all_gather", false, false, true, all_gather_collective},
    {OpKind::reduce_scatter, "reduce_scatter", true, false, true, reduce_scatter_collective},
    {OpKind::barrier, "barrier", false, false, false, barrier_collective},
    {OpKind::all_to_all, "all_to_all", false, false, true, all_to_all_collective},
};

}  // namespace

const OpTraits* traits_of(OpKind kind) noexcept {
  for (const auto& t : kCollectives)
    if (t.kind == kind) return &t;
  return nullptr;
}

const Collective& collective_of(OpKind kind) {
  const OpTraits* t = traits_of(kind);
  if (!t)
    throw Error(Errc::internal, "no collective of kind " + std::to_string(static_cast<int>(kind)));
  return t->collective();
}

Step step_of(StepKind kind, const Op& op) {
  Step s;
  s.kind = kind;
  s.type = op.type;
  s.op = op.op;
  s.root = op.root;
  s.count = op.count;
  s.in = op.in;
  s.out = op.out;
  return s;
}

void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

}  // namespace nubo::parallel
