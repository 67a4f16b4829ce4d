// The elementwise arithmetic of the collectives on host memory, for every DType and ReduceOp.
//
// Order and precision, which make the shared-memory results reproducible:
//  - reduce_ranks combines the inputs in rank order, ((in[0] op in[1]) op in[2]) ...;
//  - f16 and bf16 are widened to f32, combined in f32 and rounded once at the end;
//  - avg is the sum divided by the number of ranks: in f32 for the floating types (rounded once
//    for f16/bf16), and C++ integer division (towards zero) for i32/i64;
//  - integer sums wrap around (two's complement), as NCCL's do, instead of being undefined.
// A one-thread reference that follows these rules gets bit-identical results.
#pragma once

#include <cstddef>

#include "nubo/dtype.hpp"

namespace nubo::parallel {

// r[i] = ins[0][i] op ins[1][i] op ... op ins[n-1][i] for i in [begin, begin + count), written
// to outs[0..n_outs)[i]. Outputs may be inputs: each element is read from every input before it
// is written anywhere.
void reduce_ranks(DType type, ReduceOp op, const void* const* ins, int n, void* const* outs,
                  int n_outs, std::size_t begin, std::size_t count);

// buf[i] /= n: avg finished after sums computed in parts (a process's workers, then the
// processes), in the buffer's type.
void divide_by(DType type, void* buf, std::size_t count, int n);

// How a reduction computed in two stages (a first stage over part of the ranks, then a last
// one) applies `op`. Only avg differs: both stages sum and the sum is divided at the end, unless
// the first stage has a single rank (nothing to sum), where the last stage averages in one pass
// (f16 and bf16 rounded once). The one place that decides how avg is split.
struct StagedReduce {
  ReduceOp first;       // the first stage's op
  ReduceOp last;        // the last stage's op
  bool divide = false;  // divide_by(the team size) after the last stage
};
inline StagedReduce staged(ReduceOp op, bool first_stage_alone) {
  if (op != ReduceOp::avg) return {op, op, false};
  if (first_stage_alone) return {ReduceOp::sum, ReduceOp::avg, false};
  return {ReduceOp::sum, ReduceOp::sum, true};
}

// Member `i` of `n` takes elements [begin, begin + count) of `total`: equal slices, the first
// total % n one longer. How every communicator splits the work of a reduction.
struct Slice {
  std::size_t begin = 0, count = 0;
};
Slice slice_of(std::size_t total, int n, int i);

}  // namespace nubo::parallel
