// The IDX format (LeCun's MNIST files, also Fashion-MNIST), usually gzipped: a big-endian magic
// (0x0000 0x08 = unsigned bytes, then the number of dimensions), the dimensions as big-endian
// uint32, then the data. zlib's gzread reads gzipped and plain files alike.
#include <zlib.h>

#include <array>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nubo/dataset.hpp"
#include "nubo/error.hpp"

namespace nubo {
namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using Gz = std::unique_ptr<gzFile_s, GzCloser>;

// Reads exactly `bytes` or throws corrupt saying how much was there.
void read_exact(gzFile f, const std::string& path, void* out, std::size_t bytes, const char* what) {
  auto* p = static_cast<unsigned char*>(out);
  std::size_t done = 0;
  while (done < bytes) {
    // gzread takes an unsigned count: read in bounded pieces.
    unsigned piece = static_cast<unsigned>(std::min<std::size_t>(bytes - done, 1u << 30));
    int n = gzread(f, p + done, piece);
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      throw Error(Errc::corrupt,
                  path + ": cannot decompress the " + what + ": " + (msg ? msg : "zlib error"));
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done < bytes)
    throw Error(Errc::corrupt, path + ": truncated: the " + what + " needs " +
                                   std::to_string(bytes) + " bytes, the file has " +
                                   std::to_string(done));
}

// Opens an IDX file of unsigned bytes with `dims` dimensions; returns them.
std::vector<std::uint32_t> open_idx(Gz& gz, const std::string& path, std::uint32_t dims) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(Errc::not_found, path +
                                     ": no such file (Fashion-MNIST comes with Debian's "
                                     "dataset-fashion-mnist package)");
  gz.reset(gzopen(path.c_str(), "rb"));
  if (!gz) throw Error(Errc::io, path + ": cannot open it");
  std::array<unsigned char, 4> magic{};
  read_exact(gz.get(), path, magic.data(), 4, "header");
  const std::uint32_t want = 0x00000800u | dims;
  std::uint32_t got = (std::uint32_t{magic[0]} << 24) | (std::uint32_t{magic[1]} << 16) |
                      (std::uint32_t{magic[2]} << 8) | magic[3];
  if (got != want) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%08x, expected 0x%08x", got, want);
    throw Error(Errc::corrupt, path + ": not an IDX file of this kind: magic number " + buf);
  }
  std::vector<std::uint32_t> out(dims);
  for (auto& d : out) {
    read_exact(gz.get(), path, magic.data(), 4, "header");
    d = (std::uint32_t{magic[0]} << 24) | (std::uint32_t{magic[1]} << 16) |
        (std::uint32_t{magic[2]} << 8) | magic[3];
  }
  return out;
}

}  // namespace

std::shared_ptr<InMemoryDataset> load_idx(const std::string& images_path,
                                          const std::string& labels_path, const std::string& name,
                                          std::size_t classes) {
  Gz gi, gl;
  auto idims = open_idx(gi, images_path, 3);
  auto ldims = open_idx(gl, labels_path, 1);
  // Bounds before allocating: a damaged header must not ask for terabytes.
  constexpr std::uint64_t kMaxRows = 100'000'000, kMaxFeatures = 1u << 24, kMaxBytes = 16ull << 30;
  const std::uint64_t n = idims[0], features = std::uint64_t{idims[1]} * idims[2];
  if (n == 0 || n > kMaxRows || features == 0 || features > kMaxFeatures ||
      n * features > kMaxBytes)
    throw Error(Errc::corrupt, images_path + ": implausible dimensions " +
                                   std::to_string(idims[0]) + " x " + std::to_string(idims[1]) +
                                   " x " + std::to_string(idims[2]));
  if (ldims[0] != n)
    throw Error(Errc::corrupt, labels_path + ": has " + std::to_string(ldims[0]) + " labels but " +
                                   images_path + " has " + std::to_string(n) + " images");
  std::vector<std::uint8_t> x(n * features);
  read_exact(gi.get(), images_path, x.data(), x.size(), "image data");
  std::vector<std::uint8_t> raw(n);
  read_exact(gl.get(), labels_path, raw.data(), raw.size(), "label data");
  std::vector<std::int32_t> y(raw.begin(), raw.end());
  for (std::size_t i = 0; i < y.size(); ++i)
    if (static_cast<std::size_t>(y[i]) >= classes)
      throw Error(Errc::corrupt, labels_path + ": label " + std::to_string(i) + " is " +
                                     std::to_string(y[i]) + ", outside 0 .. " +
                                     std::to_string(classes - 1));
  auto ds = std::make_shared<InMemoryDataset>(name, std::move(x), std::move(y),
                                              static_cast<std::size_t>(features), classes);
  std::error_code ec;
  auto b1 = std::filesystem::file_size(images_path, ec);
  auto b2 = std::filesystem::file_size(labels_path, ec);
  if (!ec) ds->set_bytes_on_disk(b1 + b2);
  return ds;
}

std::shared_ptr<InMemoryDataset> load_fashion_mnist(const std::string& split,
                                                    const std::string& dir) {
  std::string prefix;
  if (split == "train")
    prefix = "train";
  else if (split == "test")
    prefix = "t10k";
  else
    throw Error(Errc::invalid_argument,
                "Fashion-MNIST split '" + split + "': use \"train\" or \"test\"");
  return load_idx(dir + "/" + prefix + "-images-idx3-ubyte.gz",
                  dir + "/" + prefix + "-labels-idx1-ubyte.gz", "fashion-mnist/" + split, 10);
}

}  // namespace nubo
