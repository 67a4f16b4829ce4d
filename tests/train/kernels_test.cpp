// The trainer's model kernels (lib/train/kernels.hpp) on the host's table against plain
// references, with the edge cases: zero sizes, ReLU at 0, large logits, bad labels, Adam's
// first step. The CUDA table runs the same math.hpp functions (benchmarks/gpu_check.sh
// compares it with this one on a GPU).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "../device/backend/backend_helpers.hpp"
#include "nubo/error.hpp"
#include "nubo_plugin/math.hpp"
#include "train/kernels.hpp"

using namespace nubo;
using namespace nubo::testing;
// Host memory from a backend (the test helper, not the public buffer).
template <class T>
using Memory = nubo::testing::DeviceBuffer<T>;

namespace {

// The host table over host memory (sim devices use the same table).
struct Fixture {
  std::unique_ptr<detail::DeviceBackend> be = detail::make_backend(host_device());
  std::unique_ptr<train::Kernels> k = train::host_kernels();
};

}  // namespace

TEST_CASE("the model kernels accept zero sizes", "[train][kernels]") {
  Fixture f;
  auto& b = f.be;
  Memory<float> x(*b, 4, 1.0f);
  Memory<std::int32_t> labels(*b, 4, 0);
  f.k->relu(x.get(), x.get(), 0);
  f.k->relu_grad(x.get(), x.get(), x.get(), 0);
  f.k->bias_add(x.get(), x.get(), 0, 4);
  f.k->bias_add(x.get(), x.get(), 4, 0);
  f.k->softmax_xent_forward(x.get(), labels.get(), x.get(), x.get(), 0, 4);
  f.k->softmax_xent_backward(x.get(), labels.get(), x.get(), 0, 4, 1.0f);
  for (float v : x.read()) REQUIRE(v == 1.0f);  // nothing was touched
}

TEST_CASE("bias_add adds per column and bias_grad sums per column", "[train][kernels]") {
  const std::size_t rows = 7, cols = 5;
  const auto y0 = random_floats(rows * cols, 4);
  const auto bias = random_floats(cols, 5);
  {
    Fixture f;
    auto& b = f.be;
    Memory<float> y(*b, y0), bb(*b, bias), db(*b, cols, 99.0f);
    f.k->bias_add(y.get(), bb.get(), rows, cols);
    const auto out = y.read();
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        REQUIRE(out[r * cols + c] == y0[r * cols + c] + bias[c]);

    f.k->bias_grad(y.get(), db.get(), rows, cols);  // overwrites, does not accumulate
    const auto grad = db.read();
    for (std::size_t c = 0; c < cols; ++c) {
      float s = 0;
      for (std::size_t r = 0; r < rows; ++r) s += out[r * cols + c];
      REQUIRE(grad[c] == s);
    }
  }
}

TEST_CASE("relu and its gradient, with the gradient at 0 taken as 0", "[train][kernels]") {
  const std::vector<float> x = {-2.0f,  -0.0f, 0.0f,
                                1e-30f, 3.5f,  std::numeric_limits<float>::quiet_NaN()};
  const std::vector<float> dy = {10, 20, 30, 40, 50, 60};
  {
    Fixture f;
    auto& b = f.be;
    Memory<float> xd(*b, x), yd(*b, x.size(), -1.0f), dyd(*b, dy), dxd(*b, x.size(), -1.0f);
    f.k->relu(xd.get(), yd.get(), x.size());
    CHECK(yd.read() == std::vector<float>{0, 0, 0, 1e-30f, 3.5f, 0});
    f.k->relu_grad(xd.get(), dyd.get(), dxd.get(), x.size());
    CHECK(dxd.read() == std::vector<float>{0, 0, 0, 40, 50, 0});
    f.k->relu(xd.get(), xd.get(), x.size());  // in place
    CHECK(xd.read() == std::vector<float>{0, 0, 0, 1e-30f, 3.5f, 0});
  }
}

namespace {

// Softmax and cross-entropy of one row in double, by the textbook formula.
void reference_softmax(const float* z, std::size_t cols, int label, std::vector<double>& p,
                       double& loss) {
  double m = -INFINITY;
  for (std::size_t i = 0; i < cols; ++i) m = std::max(m, static_cast<double>(z[i]));
  double s = 0;
  for (std::size_t i = 0; i < cols; ++i) s += std::exp(z[i] - m);
  p.resize(cols);
  for (std::size_t i = 0; i < cols; ++i) p[i] = std::exp(z[i] - m) / s;
  loss = std::log(s) + m - z[label];
}

}  // namespace

TEST_CASE("softmax cross-entropy forward matches a double-precision reference",
          "[train][kernels]") {
  const std::size_t rows = 6, cols = 10;
  auto logits = random_floats(rows * cols, 6, -5.0f, 5.0f);
  // Row 3: logits so large that exp() without the max subtracted would overflow.
  for (std::size_t c = 0; c < cols; ++c) logits[3 * cols + c] = 1e4f + static_cast<float>(c);
  // Row 4: hugely negative, and one -inf.
  for (std::size_t c = 0; c < cols; ++c) logits[4 * cols + c] = -1e4f - static_cast<float>(c);
  logits[4 * cols + 7] = -INFINITY;
  const std::vector<std::int32_t> labels = {0, 9, 3, 9, 1, 5};
  {
    Fixture f;
    auto& b = f.be;
    Memory<float> z(*b, logits), probs(*b, rows * cols, 0.0f), loss(*b, rows, 0.0f);
    Memory<std::int32_t> y(*b, labels);
    f.k->softmax_xent_forward(z.get(), y.get(), probs.get(), loss.get(), rows, cols);
    const auto p = probs.read();
    const auto l = loss.read();
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<double> ref;
      double ref_loss = 0;
      reference_softmax(&logits[r * cols], cols, labels[r], ref, ref_loss);
      double sum = 0;
      for (std::size_t c = 0; c < cols; ++c) {
        REQUIRE(std::isfinite(p[r * cols + c]));
        CHECK(p[r * cols + c] == Approx(ref[c]).margin(1e-6).epsilon(1e-5));
        sum += p[r * cols + c];
      }
      CHECK(sum == Approx(1.0).epsilon(1e-5));
      REQUIRE(std::isfinite(l[r]));
      CHECK(l[r] == Approx(ref_loss).margin(1e-5).epsilon(1e-5));
    }
    double tail = 0;  // row 3, label 9 (the maximum): log(sum_j exp(-j))
    for (int j = 0; j < 10; ++j) tail += std::exp(-j);
    CHECK(l[3] == Approx(std::log(tail)).epsilon(1e-5));
  }
}

TEST_CASE("a label outside the classes gives a NaN loss, not a crash", "[train][kernels]") {
  {
    Fixture f;
    auto& b = f.be;
    Memory<float> z(*b, {1, 2, 3, 4, 5, 6}), probs(*b, 6, 0.0f), loss(*b, 2, 0.0f);
    Memory<std::int32_t> y(*b, {3, -1});
    f.k->softmax_xent_forward(z.get(), y.get(), probs.get(), loss.get(), 2, 3);
    const auto l = loss.read();
    CHECK(std::isnan(l[0]));
    CHECK(std::isnan(l[1]));
  }
}

TEST_CASE("softmax cross-entropy backward is (p - onehot) * scale", "[train][kernels]") {
  const std::size_t rows = 4, cols = 3;
  const auto probs = random_floats(rows * cols, 7, 0.0f, 1.0f);
  const std::vector<std::int32_t> labels = {2, 0, 1, 1};
  {
    Fixture f;
    auto& b = f.be;
    Memory<float> p(*b, probs), dz(*b, rows * cols, 0.0f);
    Memory<std::int32_t> y(*b, labels);
    f.k->softmax_xent_backward(p.get(), y.get(), dz.get(), rows, cols, 0.25f);
    const auto g = dz.read();
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) {
        const float onehot = static_cast<int>(c) == labels[r] ? 1.0f : 0.0f;
        REQUIRE(g[r * cols + c] == (probs[r * cols + c] - onehot) * 0.25f);
      }
    // In place over the probabilities, as a trainer does it.
    f.k->softmax_xent_backward(p.get(), y.get(), p.get(), rows, cols, 0.25f);
    REQUIRE(p.read() == g);
  }
}

TEST_CASE("forward then backward is the gradient of the mean loss", "[train][kernels]") {
  // A finite-difference check ties the two kernels to the loss they claim to differentiate.
  const std::size_t rows = 2, cols = 4;
  auto logits = random_floats(rows * cols, 8, -2.0f, 2.0f);
  const std::vector<std::int32_t> labels = {1, 3};
  Fixture f;
  auto mean_loss = [&](const std::vector<float>& z) {
    std::vector<float> p(rows * cols), l(rows);
    f.k->softmax_xent_forward(z.data(), labels.data(), p.data(), l.data(), rows, cols);
    return (static_cast<double>(l[0]) + l[1]) / rows;
  };
  std::vector<float> p(rows * cols), l(rows), g(rows * cols);
  f.k->softmax_xent_forward(logits.data(), labels.data(), p.data(), l.data(), rows, cols);
  f.k->softmax_xent_backward(p.data(), labels.data(), g.data(), rows, cols, 1.0f / rows);
  for (std::size_t i = 0; i < logits.size(); ++i) {
    auto up = logits, down = logits;
    up[i] += 1e-2f;
    down[i] -= 1e-2f;
    const double numeric = (mean_loss(up) - mean_loss(down)) / 2e-2;
    CHECK(g[i] == Approx(numeric).margin(1e-3));
  }
}

TEST_CASE("the shared math is the documented formula", "[train][kernels][math]") {
  CHECK(math::relu(-1.0f) == 0.0f);
  CHECK(math::relu_grad(0.0f, 5.0f) == 0.0f);
  CHECK(math::xent_grad(0.25f, true, 2.0f) == -1.5f);
  float probs[3];
  const float z[3] = {0.0f, 0.0f, 0.0f};
  CHECK(math::softmax_xent_row(z, 3, 1, probs) == Approx(std::log(3.0)));
  CHECK(probs[0] == Approx(1.0 / 3));
  const math::AdamStep s = math::adam_step_constants(1, 0.9f, 0.999f, 0, 0, 1);
  CHECK(s.c1 == Approx(10.0).epsilon(1e-6));
  CHECK(s.c2 == Approx(1000.0).epsilon(1e-4));
}
