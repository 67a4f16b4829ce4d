// The trainer's arithmetic is pinned: the parameters after a fixed number of steps hash to
// values recorded from the trainer as it was before its kernels moved behind the public Worker
// API. Any change to the order of operations in forward, backward, the all-reduce or the
// optimizer shows up here as a different hash.
//
// The hashes hold for the OpenBLAS this was recorded with (Debian 12's 0.3.21, Haswell kernels,
// any thread count): another kernel family sums its products in another order. Elsewhere the
// test still checks that two identical runs agree bit for bit.
#include <catch2/catch.hpp>
#include <cstring>

#include "device/openblas.hpp"
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
  const std::string blas = nubo::detail::openblas_description();
  CAPTURE(blas);
  if (blas.find("Haswell") != std::string::npos) {
    const std::uint64_t recorded[] = {0x4b243c4b7d0afe63ull, 0x35745700fb6dca6cull,
                                      0xa203b261248c8e66ull, 0x5e2c21b1372aed55ull};
    for (std::size_t i = 0; i < std::size(got); ++i) {
      CAPTURE(i);
      CHECK(got[i] == recorded[i]);
    }
  } else {
    WARN("hashes recorded with OpenBLAS Haswell kernels; this one is: " << blas);
    CHECK(train_and_hash(sim, nubo::Optimizer::sgd, 512) == got[2]);
  }
}
