#include "parallel/gloo_algorithms.hpp"

#include <gloo/allgather_ring.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/broadcast_one_to_all.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nubo/error.hpp"
#include "parallel/reduce.hpp"

namespace nubo::parallel {
namespace {

// The reduction of one (dtype, op) as Gloo's ReductionFunction over T, the storage type of
// that element size: Gloo's classic algorithms take a plain function pointer, so each pair is a
// function of its own.
template <class T, DType D, ReduceOp O>
void reduce_into(T* x, const T* y, size_t n) {
  reduce_pair(D, O, x, x, y, n);
}

template <class T, DType D>
const gloo::ReductionFunction<T>* reduction_for(ReduceOp op) {
  using RF = gloo::ReductionFunction<T>;
  static const RF sum(gloo::SUM, &reduce_into<T, D, ReduceOp::sum>);  // avg: the caller divides
  static const RF max(gloo::MAX, &reduce_into<T, D, ReduceOp::max>);
  static const RF min(gloo::MIN, &reduce_into<T, D, ReduceOp::min>);
  switch (op) {
    case ReduceOp::max:
      return &max;
    case ReduceOp::min:
      return &min;
    default:
      return &sum;
  }
}

template <class T>
std::unique_ptr<gloo::Algorithm> make_typed(const std::shared_ptr<gloo::Context>& ctx,
                                            const AlgoKey& k,
                                            const gloo::ReductionFunction<T>* fn) {
  const int count = static_cast<int>(k.count);
  T* out = static_cast<T*>(k.out);
  switch (k.kind) {
    case OpKind::all_reduce:
      // A plain ring moves the whole buffer P - 1 times, the chunked one 2(P - 1)/P times:
      // the same for two processes, where the plain ring has fewer steps.
      if (ctx->size == 2)
        return std::make_unique<gloo::AllreduceRing<T>>(ctx, std::vector<T*>{out}, count, fn);
      return std::make_unique<gloo::AllreduceRingChunked<T>>(ctx, std::vector<T*>{out}, count, fn);
    case OpKind::broadcast:
      return std::make_unique<gloo::BroadcastOneToAll<T>>(ctx, std::vector<T*>{out}, k.count,
                                                          k.root);
    case OpKind::all_gather:
      return std::make_unique<gloo::AllgatherRing<T>>(
          ctx, std::vector<const T*>{static_cast<const T*>(k.in)}, out, count);
    default:
      throw Error(Errc::internal, "no Gloo algorithm for " + std::string(op_kind_name(k.kind)));
  }
}

}  // namespace

std::unique_ptr<gloo::Algorithm> make_algorithm(const std::shared_ptr<gloo::Context>& ctx,
                                                const AlgoKey& k) {
  switch (k.type) {
    case DType::f32:
      return make_typed<float>(ctx, k, reduction_for<float, DType::f32>(k.op));
    case DType::f16:
      return make_typed<std::uint16_t>(ctx, k, reduction_for<std::uint16_t, DType::f16>(k.op));
    case DType::bf16:
      return make_typed<std::uint16_t>(ctx, k, reduction_for<std::uint16_t, DType::bf16>(k.op));
    case DType::i32:
      return make_typed<std::int32_t>(ctx, k, reduction_for<std::int32_t, DType::i32>(k.op));
    case DType::i64:
      return make_typed<std::int64_t>(ctx, k, reduction_for<std::int64_t, DType::i64>(k.op));
  }
  throw Error(Errc::invalid_argument, "unknown dtype " + std::to_string(static_cast<int>(k.type)));
}

}  // namespace nubo::parallel
