#include "parallel/links/gloo_algorithms.hpp"

#include <gloo/allgather_ring.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/transport/buffer.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nubo/error.hpp"
#include "parallel/links/reduce.hpp"

namespace nubo::parallel {
namespace {

// The all-reduce whose result is the one-thread reference's, bit for bit: a reduce-scatter and
// an all-gather, each process exchanging directly with every other. Process p owns slice p
// (slice_of): it receives slice p of every other process's buffer, reduces them all in process
// order with reduce_ranks (f16 and bf16 widened once and rounded once), and sends the result
// to every other. Each process sends and receives 2(P - 1)/P of the buffer, as in a ring, in two
// steps instead of 2(P - 1).
class DirectAllreduce final : public gloo::Algorithm {
 public:
  DirectAllreduce(const std::shared_ptr<gloo::Context>& ctx, DType type, ReduceOp op, void* out,
                  std::size_t count)
      : gloo::Algorithm(ctx),
        type_(type),
        op_(op),
        es_(dtype_size(type)),
        out_(static_cast<unsigned char*>(out)),
        count_(count) {
    const int n = contextSize_, me = contextRank_;
    const Slice mine = slice_of(count, n, me);
    scratch_.resize(static_cast<std::size_t>(n) * mine.count * es_);
    const int gather = ctx->nextSlot(), scatter = ctx->nextSlot();
    send_.resize(static_cast<std::size_t>(n));
    from_.resize(static_cast<std::size_t>(n));
    result_.resize(static_cast<std::size_t>(n));
    for (int q = 0; q < n; ++q) {
      if (q == me) continue;
      const Slice theirs = slice_of(count, n, q);
      auto& pair = getPair(q);
      const auto i = static_cast<std::size_t>(q);
      send_[i] = pair->createSendBuffer(gather, out_, count * es_);
      if (mine.count > 0) from_[i] = pair->createRecvBuffer(gather, slot(q), mine.count * es_);
      if (theirs.count > 0)
        result_[i] = pair->createRecvBuffer(scatter, out_ + theirs.begin * es_, theirs.count * es_);
      // The reduced slice leaves from the same memory on the second slot.
      if (mine.count > 0)
        reply_.emplace_back(q, pair->createSendBuffer(scatter, out_, count * es_));
    }
  }

  void run() override {
    const int n = contextSize_, me = contextRank_;
    const Slice mine = slice_of(count_, n, me);
    for (int q = 0; q < n; ++q) {
      const Slice theirs = slice_of(count_, n, q);
      if (q != me && theirs.count > 0)
        send_[static_cast<std::size_t>(q)]->send(theirs.begin * es_, theirs.count * es_);
    }
    for (int q = 0; q < n; ++q)
      if (q != me && mine.count > 0) from_[static_cast<std::size_t>(q)]->waitRecv();
    if (mine.count > 0) {
      std::vector<const void*> ins(static_cast<std::size_t>(n));
      for (int q = 0; q < n; ++q)
        ins[static_cast<std::size_t>(q)] = q == me ? out_ + mine.begin * es_ : slot(q);
      void* dst = out_ + mine.begin * es_;
      reduce_ranks(type_, op_, ins.data(), n, &dst, 1, 0, mine.count);
    }
    for (int q = 0; q < n; ++q) {
      const Slice theirs = slice_of(count_, n, q);
      if (q != me && theirs.count > 0) send_[static_cast<std::size_t>(q)]->waitSend();
    }
    for (auto& [q, buf] : reply_) buf->send(mine.begin * es_, mine.count * es_);
    for (int q = 0; q < n; ++q)
      if (result_[static_cast<std::size_t>(q)]) result_[static_cast<std::size_t>(q)]->waitRecv();
    for (auto& [q, buf] : reply_) buf->waitSend();
  }

 private:
  // Where process q's copy of this process's slice lands.
  unsigned char* slot(int q) {
    return scratch_.data() +
           static_cast<std::size_t>(q) * slice_of(count_, contextSize_, contextRank_).count * es_;
  }

  DType type_;
  ReduceOp op_;
  std::size_t es_;
  unsigned char* out_;
  std::size_t count_;
  std::vector<unsigned char> scratch_;
  std::vector<std::unique_ptr<gloo::transport::Buffer>> send_, from_, result_;
  std::vector<std::pair<int, std::unique_ptr<gloo::transport::Buffer>>> reply_;
};

// Broadcast and all-gather only move bytes: T is any type of the element's size.
template <class T>
std::unique_ptr<gloo::Algorithm> make_typed(const std::shared_ptr<gloo::Context>& ctx,
                                            const Step& k) {
  const int count = static_cast<int>(k.count);
  T* out = static_cast<T*>(k.out);
  switch (k.kind) {
    case StepKind::broadcast:
      return std::make_unique<gloo::BroadcastOneToAll<T>>(ctx, std::vector<T*>{out}, k.count,
                                                          k.root);
    case StepKind::gather:
      return std::make_unique<gloo::AllgatherRing<T>>(
          ctx, std::vector<const T*>{static_cast<const T*>(k.in)}, out, count);
    default:
      throw Error(Errc::internal,
                  "no Gloo algorithm for step " + std::to_string(static_cast<int>(k.kind)));
  }
}

}  // namespace

std::unique_ptr<gloo::Algorithm> make_algorithm(const std::shared_ptr<gloo::Context>& ctx,
                                                const Step& k) {
  if (k.kind == StepKind::reduce)
    return std::make_unique<DirectAllreduce>(ctx, k.type, k.op, k.out, k.count);
  switch (dtype_size(k.type)) {
    case 2:
      return make_typed<std::uint16_t>(ctx, k);
    case 4:
      return make_typed<std::uint32_t>(ctx, k);
    case 8:
      return make_typed<std::uint64_t>(ctx, k);
  }
  throw Error(Errc::invalid_argument, "unknown dtype " + std::to_string(static_cast<int>(k.type)));
}

}  // namespace nubo::parallel
