#include "device/host/openblas_copies.hpp"

#include <dlfcn.h>

#include <mutex>

#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kCopiesAllowed = false;
#else
constexpr bool kCopiesAllowed = true;
#endif

struct Copy {
  OpenBlas blas;
  int threads = 0;  // what it was last set to
  int users = 0;    // leases holding it
};

// The copies loaded so far, for the life of the process (a namespace is not worth unloading:
// its pool threads would have to be stopped first).
class CopyPool {
 public:
  // A copy no lease holds, loading one when all are held; null when no more can be loaded.
  Copy* free_copy() {
    for (auto& c : copies_)
      if (c->users == 0 && c.get() != single_) return c.get();
    return load();
  }

  // The copy every one-thread lease shares; null when none can be loaded.
  Copy* single_thread_copy() {
    if (!single_) single_ = free_copy();
    return single_;
  }

  std::mutex mutex;

 private:
  Copy* load() {
    if (!kCopiesAllowed || exhausted_) return nullptr;
    try {
      void* handle = open_openblas(
          [](const char* name) { return dlmopen(LM_ID_NEWLM, name, RTLD_NOW | RTLD_LOCAL); });
      auto c = std::make_unique<Copy>();
      c->blas = openblas_symbols(handle);
      copies_.push_back(std::move(c));
      return copies_.back().get();
    } catch (const Error&) {
      exhausted_ = true;  // out of namespaces or static TLS: later teams share what there is
      return nullptr;
    }
  }

  std::vector<std::unique_ptr<Copy>> copies_;
  Copy* single_ = nullptr;
  bool exhausted_ = false;
};

CopyPool& pool() {
  static CopyPool* p = new CopyPool;  // never destroyed: copies outlive every static user
  return *p;
}

class PrivateLease final : public BlasLease {
 public:
  PrivateLease(Copy* copy, int threads) : copy_(copy), threads_(threads) {}
  ~PrivateLease() override {
    std::lock_guard<std::mutex> lock(pool().mutex);
    --copy_->users;
  }
  const OpenBlas& blas() const override { return copy_->blas; }
  int threads() const override { return threads_; }
  bool private_copy() const override { return true; }
  void pin(const std::vector<int>& cpus) const override {
    if (!copy_->blas.setaffinity || cpus.empty() || threads_ < 2) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    for (int t = 0; t + 1 < threads_; ++t) copy_->blas.setaffinity(t, sizeof set, &set);
  }

 private:
  Copy* copy_;
  int threads_;
};

class ProcessLease final : public BlasLease {
 public:
  const OpenBlas& blas() const override { return openblas(); }
  int threads() const override { return openblas().get_num_threads(); }
  bool private_copy() const override { return false; }
  void pin(const std::vector<int>&) const override {}
};

}  // namespace

std::vector<std::shared_ptr<const BlasLease>> lease_openblas(int workers, int threads) {
  if (workers < 1 || threads < 1)
    throw Error(Errc::invalid_argument, "lease_openblas: workers and threads must be positive");
  const OpenBlas& own = openblas();  // loads it, or says why it cannot be
  std::vector<std::shared_ptr<const BlasLease>> leases;
  const bool own_fits = own.get_num_threads() == threads && (workers == 1 || threads == 1);
  auto all_own = [&] {
    leases.assign(static_cast<std::size_t>(workers), std::make_shared<ProcessLease>());
    return leases;
  };
  if (own_fits) return all_own();

  std::lock_guard<std::mutex> lock(pool().mutex);
  std::vector<Copy*> copies;
  if (threads == 1) {
    if (Copy* c = pool().single_thread_copy()) copies.push_back(c);
  } else {
    for (int i = 0; i < workers; ++i) {
      Copy* c = pool().free_copy();
      if (!c) break;
      ++c->users;  // held, so that the next free_copy() passes it by
      copies.push_back(c);
    }
    for (Copy* c : copies) --c->users;  // counted again below, once per lease
  }
  if (copies.empty()) return all_own();
  for (Copy* c : copies) {
    if (c->threads != threads) c->blas.set_num_threads(threads);
    c->threads = threads;
  }
  for (int i = 0; i < workers; ++i) {
    Copy* c = copies[static_cast<std::size_t>(i) % copies.size()];
    ++c->users;
    leases.push_back(std::make_shared<PrivateLease>(c, threads));
  }
  return leases;
}

BlasShare::BlasShare(int workers, int threads, std::vector<std::vector<int>> pins)
    : workers_(workers), threads_(threads), pins_(std::move(pins)) {
  pins_.resize(static_cast<std::size_t>(workers));
}

const BlasLease& BlasShare::lease(int worker) {
  std::call_once(once_, [this] {
    auto leases = lease_openblas(workers_, threads_);
    for (std::size_t i = 0; i < leases.size(); ++i) leases[i]->pin(pins_[i]);
    leases_ = std::move(leases);
  });
  return *leases_.at(static_cast<std::size_t>(worker));
}

}  // namespace nubo::detail
