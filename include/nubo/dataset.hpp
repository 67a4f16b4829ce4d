// Datasets for the trainer: a small interface (rows of fp32 features with an int32 class label)
// so that other data can be plugged in, an in-memory implementation, and a loader for
// Fashion-MNIST in its gzipped IDX files (Debian's dataset-fashion-mnist package).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nubo/export.hpp"

namespace nubo {

class NUBO_API Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::size_t size() const = 0;      // rows
  virtual std::size_t features() const = 0;  // fp32 values per row
  virtual std::size_t classes() const = 0;   // labels lie in [0, classes)
  // Copies rows[i] into x (features() floats per row) and y, for every i. Called from several
  // worker threads at once: implementations must be safe for concurrent reads.
  virtual void fetch(std::span<const std::size_t> rows, float* x, std::int32_t* y) const = 0;
  // A name for messages and the profile ("fashion-mnist/train").
  virtual std::string name() const = 0;
  // Its size on disk (the profile's dataset.bytes); 0 when not known.
  virtual std::uint64_t bytes_on_disk() const { return 0; }
};

// Rows of bytes scaled to [0, 1] (pixels), or rows of floats, held in memory.
class NUBO_API InMemoryDataset : public Dataset {
 public:
  // `features` floats per row; labels must lie in [0, classes) (checked, invalid_argument).
  InMemoryDataset(std::string name, std::vector<float> x, std::vector<std::int32_t> y,
                  std::size_t features, std::size_t classes);
  // Bytes, scaled by 1/255 when fetched: 4x less memory for images.
  InMemoryDataset(std::string name, std::vector<std::uint8_t> x, std::vector<std::int32_t> y,
                  std::size_t features, std::size_t classes);

  std::size_t size() const override { return y_.size(); }
  std::size_t features() const override { return features_; }
  std::size_t classes() const override { return classes_; }
  void fetch(std::span<const std::size_t> rows, float* x, std::int32_t* y) const override;
  std::string name() const override { return name_; }
  std::uint64_t bytes_on_disk() const override { return disk_bytes_; }
  void set_bytes_on_disk(std::uint64_t b) { disk_bytes_ = b; }

  // The first n rows (all when n >= size()), for quick runs and tests.
  std::shared_ptr<InMemoryDataset> head(std::size_t n) const;

 private:
  std::string name_;
  std::vector<float> xf_;
  std::vector<std::uint8_t> xb_;
  std::vector<std::int32_t> y_;
  std::size_t features_ = 0, classes_ = 0;
  std::uint64_t disk_bytes_ = 0;
};

// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Reads a gzipped (or plain) IDX pair: images (magic 0x00000803, n x rows x cols bytes) and
// labels (magic 0x00000801, n bytes). Errors name the file: not_found when missing, corrupt for a
// wrong magic, a truncated file, counts that disagree, or sizes beyond sane bounds.
NUBO_API std::shared_ptr<InMemoryDataset> load_idx(const std::string& images_path,
                                                   const std::string& labels_path,
                                                   const std::string& name, std::size_t classes);
// split: "train" (60000 rows) or "test" (10000 rows), from `dir`.
NUBO_API std::shared_ptr<InMemoryDataset> load_fashion_mnist(
    const std::string& split, const std::string& dir = kFashionMnistDir);

}  // namespace nubo
