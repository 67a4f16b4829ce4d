// Small synthetic data and teams of CPU workers for the trainer's tests.
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nubo/dataset.hpp"
#include "nubo/device.hpp"
#include "nubo/parallel.hpp"
#include "nubo/train.hpp"

namespace train_test {

// Rows in [0, 1) whose class is the argmax of a fixed linear map: learnable, and cheap.
inline std::shared_ptr<nubo::InMemoryDataset> synthetic(std::size_t rows, std::size_t features = 20,
                                                        std::size_t classes = 4,
                                                        std::uint64_t seed = 7) {
  std::mt19937 gen(static_cast<std::uint32_t>(seed));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> w(features * classes), x(rows * features);
  for (auto& v : w) v = u(gen) - 0.5f;
  std::vector<std::int32_t> y(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    float best = -1e30f;
    for (std::size_t f = 0; f < features; ++f) x[r * features + f] = u(gen);
    for (std::size_t c = 0; c < classes; ++c) {
      float s = 0;
      for (std::size_t f = 0; f < features; ++f) s += x[r * features + f] * w[f * classes + c];
      if (s > best) {
        best = s;
        y[r] = static_cast<std::int32_t>(c);
      }
    }
  }
  return std::make_shared<nubo::InMemoryDataset>("synthetic", std::move(x), std::move(y), features,
                                                 classes);
}

inline nubo::Team cpu_team(int workers) {
  static const nubo::Device host = nubo::discover().host_device();
  return nubo::Team(std::vector<nubo::Device>(static_cast<std::size_t>(workers), host));
}

inline nubo::TrainerOptions small_options() {
  nubo::TrainerOptions o;
  o.layers = {20, 32, 16, 4};
  o.global_batch = 64;
  o.lr = 0.1f;
  o.seed = 11;
  return o;
}

// A fresh directory under the system's temporary one.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("nubo-train-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    m = std::max(m, static_cast<double>(std::abs(a[i] - b[i])));
  return a.size() == b.size() ? m : 1e30;
}

}  // namespace train_test
