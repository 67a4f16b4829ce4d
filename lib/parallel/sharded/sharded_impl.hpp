// ShardedOptimizer's state, shared by its step (sharded_optimizer.cpp) and its checkpoints
// (sharded_state.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nubo/optimizer.hpp"

namespace nubo {

namespace detail {
// invalid_argument, "sharded optimizer: WHY".
[[noreturn]] void sharded_refusal(const std::string& why);
}  // namespace detail

struct ShardedOptimizer::Impl {
  Impl(Worker& worker, DeviceBuffer& params, const ShardedOptions& options,
       std::vector<std::size_t> slice_sizes);

  // This rank's shard of slice i inside a whole flat buffer of the layout.
  DeviceBuffer own_part(DeviceBuffer& flat, std::size_t i);
  // Slice i's part of the master weights, of a state vector (m or v; empty stays empty), and of
  // the reduced gradients: whole on stage 0, this rank's shard otherwise.
  DeviceBuffer master_of(std::size_t i);
  DeviceBuffer state_of(DeviceBuffer& vec, std::size_t i);
  DeviceBuffer grads_of(std::size_t i);
  void check_slice(std::size_t i, const char* what) const;
  void check_stage3(std::size_t i, const char* what) const;

  void reduce(std::size_t i, DeviceBuffer& grads);
  void finish_reductions();
  StepResult step();
  void prefetch(std::size_t i);
  DeviceBuffer gather(std::size_t i);
  void release(std::size_t i);
  // After the master weights changed from outside (load_state): the application's copy
  // (stages 0 to 2) or the parameter shard (stage 3) made from them again.
  void publish_parameters();

  Worker& w;
  ShardedOptions o;
  StagePlan plan;  // what o.stage shards
  ShardLayout layout;
  int rank, world;
  bool scaling = false;
  bool all_reduce_in_place = false;  // see whole_grads
  float scale = 1.0f;
  std::int64_t clean_steps = 0;
  std::uint64_t steps = 0;
  std::uint64_t bytes = 0;  // each worker's bytes on the wire under ring algorithms
  // A collective's share of `bytes`: (n - 1) / n of the data for a reduce-scatter or an
  // all-gather, twice that for an all-reduce (nccl-tests' bus bytes).
  void count_wire(std::size_t data_bytes, int passes);

  DeviceBuffer params_view;  // stages 0 to 2: the application's parameters
  DeviceBuffer master;       // f32; stage 0 with f32 parameters: empty (params_view is it)
  DeviceBuffer m, v;         // the rule's state (v empty for SGD)
  DeviceBuffer grad_shard;   // stages 1 to 3: the reduced gradients of this rank's shard
  DeviceBuffer param_shard;  // stage 3: this rank's parameters
  DeviceBuffer stats;        // unscale_check's two floats
  DeviceBuffer wire_full, wire_shard, residual;  // a compressed wire's buffers

  struct InFlight {
    Pending pending;
    std::size_t slice;
  };
  std::vector<InFlight> in_flight;
  std::vector<DeviceBuffer> wire_sources;  // kept alive until their collectives finish
  std::vector<bool> reduced;
  // The application's gradients per slice, when they are all-reduced in place (stage 0, and
  // stage 1 on host links, where a reduce-scatter is an all-reduce of a staging copy).
  std::vector<DeviceBuffer> whole_grads;
  std::vector<DeviceBuffer> gathered;  // stage 3
  std::vector<Pending> gathering;
};

}  // namespace nubo
