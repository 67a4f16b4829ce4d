// What a Team and its Workers are made of, shared by team.cpp, team_setup.cpp and the worker's
// files (worker.cpp, worker_compute.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/backend/backend.hpp"
#include "nubo/health.hpp"
#include "nubo/parallel.hpp"
#include "parallel/collectives/local_group.hpp"
#include "parallel/communicators/communicator.hpp"
#include "parallel/links/remote.hpp"
#include "parallel/rendezvous/store.hpp"

namespace nubo::detail {

struct WorkerState {
  int local = 0;       // index in this process
  int rank = 0;        // in the team
  int size = 0;        // of the team
  int local_size = 0;  // workers in this process
  std::shared_ptr<DeviceBackend> backend;
  std::vector<int> cpus;  // pinned to these CPUs while it runs; empty: it floats
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Worker> worker;
  // Held by each call of the public Worker API: a worker may be called from any thread, and
  // its stream and collective sequence take one call at a time.
  std::mutex calls;
  std::unique_lock<std::mutex> take() { return std::unique_lock<std::mutex>(calls); }
};

struct TeamState {
  int size = 0;
  int rank_offset = 0;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<parallel::Store> store;       // null for a team of one process
  std::shared_ptr<parallel::Remote> remote;     // the other processes, for host memory
  std::shared_ptr<parallel::LocalGroup> group;  // null for CUDA teams (NCCL)
  std::vector<std::unique_ptr<WorkerState>> workers;
  std::string cores;      // where the host workers' thread count came from (core_share.hpp)
  std::string transport;  // between the processes: "shm", "Gloo/TCP", "NCCL"...; "" alone
  std::atomic<bool> running{false};

  static std::unique_ptr<TeamState> create(const std::vector<Device>& devices, const JobSpec& job,
                                           bool job_from_env, const TeamOptions& options);
  void add_worker(std::unique_ptr<WorkerState> w);
  std::string describe() const;  // Team::describe
  void run(const std::function<void(Worker&)>& fn);
  // Makes every pending and later collective fail at once, here (Errc::cancelled, "cancelled
  // because <cause>") and in the other processes (which are told the cause).
  void abort(const std::string& cause) noexcept;
  ~TeamState();

  // TeamOptions::health_watch_seconds: a new fatal finding on one of this process's GPUs aborts
  // the team's collectives, naming the GPU. Declared last, so it stops first.
  std::unique_ptr<device::HealthWatch> health;
};

// Inside a buffer: allocation; its backend, to check that a worker gets buffers of its own device;
// and buffers over memory nubo did not allocate (wrap, from_dlpack, slice).
struct BufferAccess {
  // count elements of type, allocated on the backend's device.
  static DeviceBuffer allocate(std::shared_ptr<DeviceBackend> backend, DType type,
                               std::size_t count) {
    return DeviceBuffer(std::move(backend), type, count);
  }
  static const DeviceBackend* backend(const DeviceBuffer& b) { return b.backend_.get(); }
  // `memory` keeps the memory alive (or its adoption by the backend) while the buffer lives.
  static DeviceBuffer make(std::shared_ptr<DeviceBackend> backend, std::shared_ptr<void> memory,
                           void* ptr, DType type, std::size_t count) {
    DeviceBuffer b;
    b.backend_ = std::move(backend);
    b.memory_ = std::move(memory);
    b.ptr_ = ptr;
    b.type_ = type;
    b.count_ = count;
    return b;
  }
  static const std::shared_ptr<void>& memory(const DeviceBuffer& b) { return b.memory_; }
  static const std::shared_ptr<DeviceBackend>& shared_backend(const DeviceBuffer& b) {
    return b.backend_;
  }
};

// The event behind an Event.
struct EventAccess {
  static DeviceEvent* event(const Event& e) { return e.event_.get(); }
};

}  // namespace nubo::detail
