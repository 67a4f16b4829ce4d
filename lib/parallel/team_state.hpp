// What a Team and its Workers are made of, shared by team.cpp and worker.cpp (and, later, the
// trainer, which needs the workers' backends).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "device/backend.hpp"
#include "device/communicator.hpp"
#include "nubo/parallel.hpp"
#include "parallel/host_communicator.hpp"
#include "parallel/local_group.hpp"
#include "parallel/remote.hpp"
#include "parallel/store.hpp"

namespace nubo::detail {

struct WorkerState {
  int local = 0;       // index in this process
  int rank = 0;        // in the team
  int size = 0;        // of the team
  int local_size = 0;  // workers in this process
  std::shared_ptr<DeviceBackend> backend;
  std::unique_ptr<Communicator> comm;
  parallel::HostCommunicator* host_comm = nullptr;  // comm, when it is the shared-memory one
  DeviceBuffer barrier_word;  // NCCL's asynchronous barrier: an all-reduce of one int32
  std::unique_ptr<Worker> worker;
};

struct TeamState {
  int size = 0;
  int rank_offset = 0;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<parallel::Store> store;       // null for a team of one process
  std::shared_ptr<parallel::Remote> remote;     // the other processes, for host memory
  std::shared_ptr<parallel::LocalGroup> group;  // null for CUDA teams (NCCL)
  std::vector<std::unique_ptr<WorkerState>> workers;
  std::atomic<bool> running{false};

  static std::unique_ptr<TeamState> create(const std::vector<Device>& devices, const JobSpec& job,
                                           bool job_from_env, const TeamOptions& options);
  void add_worker(std::unique_ptr<WorkerState> w);
  void run(const std::function<void(Worker&)>& fn);
  // Makes every pending and later collective fail at once, here (Errc::cancelled, "cancelled
  // because <cause>") and in the other processes (which are told the cause).
  void abort(const std::string& cause) noexcept;
  ~TeamState();
};

// What lies behind a Worker, for the parts of nubo built on teams (the trainer runs its kernels
// on the worker's backend): WorkerAccess::state(w).backend.
struct WorkerAccess {
  static WorkerState& state(Worker& w) { return *w.state_; }
  static const WorkerState& state(const Worker& w) { return *w.state_; }
};

// A buffer's backend, to check that a collective gets buffers of the worker's own device.
struct BufferAccess {
  static const DeviceBackend* backend(const DeviceBuffer& b) { return b.backend_.get(); }
};

}  // namespace nubo::detail
