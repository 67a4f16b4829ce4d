#include "parallel/links/gloo_algorithms.hpp"

#include <gloo/allgather_ring.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/transport/buffer.h>

#include <cstdint>
#include <cstring>
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

// The exchange: each process sends block q of its input straight to process q and receives
// process q's block into block q of its output, on buffers bound once per set of buffers.
// (Gloo's own gloo::alltoall works on unbound buffers, which with Debian's Gloo wait about 4
// ms whenever data arrives before its receive is posted: half the speed at 1 MiB.)
class PairwiseExchange final : public gloo::Algorithm {
 public:
  PairwiseExchange(const std::shared_ptr<gloo::Context>& ctx, const void* in, void* out,
                   std::size_t block)
      : gloo::Algorithm(ctx),
        in_(static_cast<const unsigned char*>(in)),
        out_(static_cast<unsigned char*>(out)),
        block_(block) {
    const int n = contextSize_, me = contextRank_;
    const int slot = ctx->nextSlot();
    send_.resize(static_cast<std::size_t>(n));
    recv_.resize(static_cast<std::size_t>(n));
    for (int q = 0; q < n && block > 0; ++q) {
      if (q == me) continue;
      const auto i = static_cast<std::size_t>(q);
      auto& pair = getPair(q);
      // Gloo's buffers are not const; it only reads a send buffer.
      send_[i] = pair->createSendBuffer(slot, const_cast<unsigned char*>(in_) + i * block, block);
      recv_[i] = pair->createRecvBuffer(slot, out_ + i * block, block);
    }
  }

  void run() override {
    const int n = contextSize_;
    const auto me = static_cast<std::size_t>(contextRank_);
    if (block_ == 0) return;
    for (int q = 0; q < n; ++q)
      if (send_[static_cast<std::size_t>(q)]) send_[static_cast<std::size_t>(q)]->send();
    std::memcpy(out_ + me * block_, in_ + me * block_, block_);
    for (int q = 0; q < n; ++q)
      if (recv_[static_cast<std::size_t>(q)]) recv_[static_cast<std::size_t>(q)]->waitRecv();
    for (int q = 0; q < n; ++q)
      if (send_[static_cast<std::size_t>(q)]) send_[static_cast<std::size_t>(q)]->waitSend();
  }

 private:
  const unsigned char* in_;
  unsigned char* out_;
  std::size_t block_;
  std::vector<std::unique_ptr<gloo::transport::Buffer>> send_, recv_;
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
  if (k.kind == StepKind::exchange)
    return std::make_unique<PairwiseExchange>(ctx, k.in, k.out, k.bytes());
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
