// all_to_all: rank r's input holds one block for every rank; rank j receives block j of every
// rank's input, in rank order (MoE expert parallelism's token exchange, NCCL's grouped
// send/recv, torch.distributed.all_to_all_single with equal splits).
#include "parallel/collectives/collective.hpp"

namespace nubo::parallel {
namespace {

class AllToAll final : public Collective {
 public:
  void alone(const GroupView& g, int local, const Op& op) const override {
    const std::size_t bytes = block_bytes(op);
    const auto mine = static_cast<std::size_t>(local) * bytes;
    for (int r = 0; r < g.size; ++r)
      copy_bytes(byte_at(op.out, static_cast<std::size_t>(r) * bytes), byte_at(g.call(r).in, mine),
                 bytes);
  }

  // Across processes of L workers each: every worker's blocks are staged by destination
  // process (send[q][a][b]: from local worker a to worker b of process q), the processes
  // exchange L x L blocks per pair, and each worker takes what came for it (recv[q][a][b]).
  // With one worker per process the inputs and outputs are exchanged as they are.
  std::size_t staging_bytes(const GroupView& g, const Op& op) const override {
    return g.size > 1 ? 2 * pairs(g) * block_bytes(op) : 0;
  }
  bool gathers(const GroupView& g) const override { return g.size > 1; }
  void gather(const GroupView& g, int local, const Op& op, ReduceOp /*first*/) const override {
    const std::size_t bytes = block_bytes(op);
    const auto L = static_cast<std::size_t>(g.size);
    const auto a = static_cast<std::size_t>(local);
    for (std::size_t q = 0; q < processes(g); ++q)
      for (std::size_t b = 0; b < L; ++b)
        copy_bytes(byte_at(g.staging, ((q * L + a) * L + b) * bytes),
                   byte_at(op.in, (q * L + b) * bytes), bytes);
  }
  Step action(const GroupView& g, const Op& op, ReduceOp /*last*/) const override {
    Step s = step_of(StepKind::exchange, op);
    const auto L = static_cast<std::size_t>(g.size);
    s.count = op.count * L * L;
    s.in = g.size > 1 ? g.staging : g.call(0).in;
    s.out = g.size > 1 ? byte_at(g.staging, pairs(g) * block_bytes(op)) : g.call(0).out;
    return s;
  }
  bool spreads(const GroupView& g) const override { return g.size > 1; }
  void spread(const GroupView& g, int local, const Op& op) const override {
    const std::size_t bytes = block_bytes(op);
    const auto L = static_cast<std::size_t>(g.size);
    const auto b = static_cast<std::size_t>(local);
    const unsigned char* recv = byte_at(g.staging, pairs(g) * bytes);
    for (std::size_t q = 0; q < processes(g); ++q)
      for (std::size_t a = 0; a < L; ++a)
        copy_bytes(byte_at(op.out, (q * L + a) * bytes), recv + ((q * L + a) * L + b) * bytes,
                   bytes);
  }

 private:
  static std::size_t block_bytes(const Op& op) { return op.count * dtype_size(op.type); }
  static std::size_t processes(const GroupView& g) {
    return static_cast<std::size_t>(g.team_size / g.size);
  }
  // Blocks in each of the send and receive stagings: team size x local workers.
  static std::size_t pairs(const GroupView& g) {
    return static_cast<std::size_t>(g.team_size) * static_cast<std::size_t>(g.size);
  }
};

}  // namespace

const Collective& all_to_all_collective() {
  static const AllToAll c;
  return c;
}

}  // namespace nubo::parallel
