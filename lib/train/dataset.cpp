// InMemoryDataset.
#include <string>

#include "nubo/dataset.hpp"
#include "nubo/error.hpp"

namespace nubo {
namespace {

void check_labels(const std::string& name, const std::vector<std::int32_t>& y,
                  std::size_t classes) {
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] < 0 || static_cast<std::size_t>(y[i]) >= classes)
      throw Error(Errc::invalid_argument, name + ": row " + std::to_string(i) + " has label " +
                                              std::to_string(y[i]) + ", outside 0 .. " +
                                              std::to_string(classes - 1));
}

void check_shape(const std::string& name, std::size_t x, std::size_t y, std::size_t features,
                 std::size_t classes) {
  if (features == 0 || classes < 2)
    throw Error(Errc::invalid_argument,
                name + ": a dataset needs at least 1 feature and 2 classes");
  if (x != y * features)
    throw Error(Errc::invalid_argument, name + ": " + std::to_string(x) + " values are not " +
                                            std::to_string(y) + " rows of " +
                                            std::to_string(features) + " features");
}

}  // namespace

InMemoryDataset::InMemoryDataset(std::string name, std::vector<float> x,
                                 std::vector<std::int32_t> y, std::size_t features,
                                 std::size_t classes)
    : name_(std::move(name)),
      xf_(std::move(x)),
      y_(std::move(y)),
      features_(features),
      classes_(classes) {
  check_shape(name_, xf_.size(), y_.size(), features, classes);
  check_labels(name_, y_, classes);
}

InMemoryDataset::InMemoryDataset(std::string name, std::vector<std::uint8_t> x,
                                 std::vector<std::int32_t> y, std::size_t features,
                                 std::size_t classes)
    : name_(std::move(name)),
      xb_(std::move(x)),
      y_(std::move(y)),
      features_(features),
      classes_(classes) {
  check_shape(name_, xb_.size(), y_.size(), features, classes);
  check_labels(name_, y_, classes);
}

void InMemoryDataset::fetch(std::span<const std::size_t> rows, float* x, std::int32_t* y) const {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::size_t r = rows[i];
    if (r >= y_.size())
      throw Error(Errc::invalid_argument, name_ + ": row " + std::to_string(r) +
                                              " is past the end (" + std::to_string(y_.size()) +
                                              " rows)");
    float* out = x + i * features_;
    if (!xb_.empty()) {
      const std::uint8_t* in = xb_.data() + r * features_;
      for (std::size_t f = 0; f < features_; ++f) out[f] = static_cast<float>(in[f]) / 255.0f;
    } else {
      const float* in = xf_.data() + r * features_;
      std::copy(in, in + features_, out);
    }
    y[i] = y_[r];
  }
}

std::shared_ptr<InMemoryDataset> InMemoryDataset::head(std::size_t n) const {
  n = std::min(n, y_.size());
  std::vector<std::int32_t> y(y_.begin(), y_.begin() + static_cast<std::ptrdiff_t>(n));
  std::shared_ptr<InMemoryDataset> out;
  if (!xb_.empty()) {
    std::vector<std::uint8_t> x(xb_.begin(),
                                xb_.begin() + static_cast<std::ptrdiff_t>(n * features_));
    out = std::make_shared<InMemoryDataset>(name_, std::move(x), std::move(y), features_, classes_);
  } else {
    std::vector<float> x(xf_.begin(), xf_.begin() + static_cast<std::ptrdiff_t>(n * features_));
    out = std::make_shared<InMemoryDataset>(name_, std::move(x), std::move(y), features_, classes_);
  }
  out->set_bytes_on_disk(y_.empty() ? 0 : disk_bytes_ * n / y_.size());
  return out;
}

}  // namespace nubo
