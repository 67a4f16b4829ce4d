// Private copies of OpenBLAS, so that host workers sharing a machine's cores each run their
// GEMMs on a thread count of their own without changing it for the process's other users
// (OpenBLAS keeps one count per library). Each copy is the same library loaded again with
// dlmopen into a link-map namespace of its own: its own thread pool, count and buffers.
//
// A copy set to one thread serves any number of workers at once: OpenBLAS's single-threaded
// GEMM takes no lock. A copy with more threads serves one worker (two callers of a threaded GEMM
// take turns). glibc allows a handful of namespaces (its static TLS runs out near ten), so when
// no more copies load, the workers share the copies they have, and with none at all they use
// the process's own OpenBLAS with its count unchanged. Copies are loaded once and reused by
// later teams. Under AddressSanitizer and ThreadSanitizer, whose runtimes do not follow a second
// libc, there are no copies.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "device/host/openblas.hpp"

namespace nubo::detail {

// One worker's OpenBLAS while the lease lives.
class BlasLease {
 public:
  virtual ~BlasLease() = default;
  virtual const OpenBlas& blas() const = 0;
  virtual int threads() const = 0;        // the threads its GEMMs use
  virtual bool private_copy() const = 0;  // false: the process's own OpenBLAS
  // Pins the copy's pool threads to `cpus` (its caller pins itself); nothing for the process's
  // own OpenBLAS, whose threads other users share.
  virtual void pin(const std::vector<int>& cpus) const = 0;
};

// Leases for `workers` workers whose GEMMs should each use `threads` threads. With threads equal
// to what the process's OpenBLAS already uses, they share it.
std::vector<std::shared_ptr<const BlasLease>> lease_openblas(int workers, int threads);

// The OpenBLAS of a team's host workers, leased when the first of them needs it: loading
// OpenBLAS starts its thread pool, whose threads poll for work for a while (about 0.1 s) and
// take the cores from the team's collectives, so a team that never multiplies never loads it.
class BlasShare {
 public:
  // `pins`: per worker, the CPUs its pool threads are pinned to (empty: they float).
  BlasShare(int workers, int threads, std::vector<std::vector<int>> pins);
  // Worker i's lease; the first call makes every worker's (thread-safe). Error(unavailable)
  // when OpenBLAS cannot be loaded (the next call tries again).
  const BlasLease& lease(int worker);

 private:
  int workers_, threads_;
  std::vector<std::vector<int>> pins_;
  std::once_flag once_;
  std::vector<std::shared_ptr<const BlasLease>> leases_;
};

}  // namespace nubo::detail
