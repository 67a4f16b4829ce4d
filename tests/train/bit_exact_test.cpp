// The trainer's arithmetic is pinned: the parameters after a fixed number of steps hash to
// values recorded from the trainer as it was before its kernels moved behind the public Worker
// API. Any change to the order of operations in forward, backward, the all-reduce or the
// optimizer shows up here as a different hash.
//
// The hashes depend on the OpenBLAS kernel family (each sums its products in its own order), not
// on the thread count; they were recorded with Debian 12's OpenBLAS 0.3.21 for the families
// below. With another one the test still checks that two identical runs agree bit for bit.
#include <catch2/catch.hpp>
#include <cstring>

#include "device/host/openblas.hpp"
#include "helpers.hpp"

using namespace train_test;

namespace {

// FNV-1a over the bit patterns of the parameters: equal hashes mean bit-identical parameters.
std::uint64_t hash_bits(const std::vector<float>& values) {
  std::uint64_t h = 1469598103934665603ull;
  for (float v : values) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 4; ++i) {
      h ^= (bits >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

std::uint64_t train_and_hash(nubo::Team& team, nubo::Optimizer optimizer, std::size_t buckets) {
  auto o = small_options();
  o.optimizer = optimizer;
  o.lr = optimizer == nubo::Optimizer::adam ? 0.01f : 0.1f;
  o.bucket_bytes = buckets;
  o.lr_decay_steps = 30;
  nubo::DataParallelTrainer t(team, o, synthetic(512));
  for (int i = 0; i < 24; ++i) t.step();
  return hash_bits(t.parameters());
}

nubo::Team sim_team(int n) {
  nubo::DiscoverOptions d;
  d.sim_devices = std::to_string(n) + "xA100-SXM4-80GB";
  d.probe_cuda = false;
  return nubo::Team(nubo::discover(d).select({.count = n}));
}

}  // namespace

TEST_CASE("the trainer's results are bit-identical to the recorded ones", "[train]") {
  auto one = cpu_team(1);
  auto two = cpu_team(2);
  auto sim = sim_team(4);
  const std::uint64_t got[] = {
      train_and_hash(one, nubo::Optimizer::sgd, 0),
      train_and_hash(two, nubo::Optimizer::adam, 1024),
      train_and_hash(sim, nubo::Optimizer::sgd, 512),
      train_and_hash(sim, nubo::Optimizer::adam, 0),
  };
  // By OpenBLAS kernel family (OPENBLAS_CORETYPE picks one; each was recorded that way).
  struct Recorded {
    const char* cores[2];
    std::uint64_t hashes[4];
  };
  const Recorded recorded[] = {
      {{"Haswell", "Zen"},
       {0x013c9b9b955d06b2ull, 0xb9d98de195048556ull, 0x430a6b8215f30700ull,
        0x3d7939708579a146ull}},
      {{"SkylakeX", "Cooperlake"},
       {0x4b243c4b7d0afe63ull, 0x35745700fb6dca6cull, 0xa203b261248c8e66ull,
        0x5e2c21b1372aed55ull}},
      {{"Sandybridge", "Sandybridge"},
       {0xa9759d74e61aff17ull, 0x7b2956016ef5be36ull, 0x93f67ae7ad5d85d3ull,
        0xdc8d97418af41d43ull}},
  };
  const std::string blas = nubo::detail::openblas_description();
  CAPTURE(blas);
  const Recorded* match = nullptr;
  for (const Recorded& r : recorded)
    for (const char* core : r.cores)
      if (blas.find(std::string(" ") + core) != std::string::npos) match = &r;
  if (match) {
    for (std::size_t i = 0; i < std::size(got); ++i) {
      CAPTURE(i);
      CHECK(got[i] == match->hashes[i]);
    }
  } else {
    WARN("no hashes recorded for this OpenBLAS kernel: " << blas);
    CHECK(train_and_hash(sim, nubo::Optimizer::sgd, 512) == got[2]);
  }
}
