// The IDX reader and the Fashion-MNIST loader: clear errors for missing, foreign and truncated
// files; the real dataset when Debian's package is installed.
#include <zlib.h>

#include <catch2/catch.hpp>

#include <fstream>
#include "skip.hpp"

#include "helpers.hpp"
#include "nubo/error.hpp"

using namespace train_test;

namespace {

void put32(std::string& s, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}

void write_gz(const std::filesystem::path& p, const std::string& bytes) {
  gzFile f = gzopen(p.string().c_str(), "wb");
  REQUIRE(f != nullptr);
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::string images(std::uint32_t magic, std::uint32_t n, std::size_t bytes_kept) {
  std::string s;
  put32(s, magic);
  put32(s, n);
  put32(s, 2);
  put32(s, 3);
  for (std::size_t i = 0; i < std::min<std::size_t>(n, 4) * 6; ++i)
    s.push_back(static_cast<char>(i * 40));
  return s.substr(0, std::min(s.size(), bytes_kept));
}

std::string labels(std::uint32_t n) {
  std::string s;
  put32(s, 0x801);
  put32(s, n);
  for (std::uint32_t i = 0; i < n; ++i) s.push_back(static_cast<char>(i % 3));
  return s;
}

nubo::Errc error_of(const std::filesystem::path& img, const std::filesystem::path& lab,
                    std::string* message = nullptr) {
  try {
    nubo::load_idx(img.string(), lab.string(), "t", 3);
  } catch (const nubo::Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return nubo::Errc::ok;
}

}  // namespace

TEST_CASE("IDX files: good, missing, wrong magic, truncated", "[train]") {
  auto dir = temp_dir("idx");
  write_gz(dir / "lab.gz", labels(4));
  write_gz(dir / "img.gz", images(0x803, 4, 1000));
  auto ds = nubo::load_idx((dir / "img.gz").string(), (dir / "lab.gz").string(), "t", 3);
  CHECK(ds->size() == 4);
  CHECK(ds->features() == 6);
  std::vector<float> x(12);
  std::vector<std::int32_t> y(2);
  std::vector<std::size_t> rows = {1, 3};
  ds->fetch(rows, x.data(), y.data());
  CHECK(y == std::vector<std::int32_t>{1, 0});
  CHECK(x[0] == Approx(static_cast<float>(static_cast<std::uint8_t>(6 * 40)) / 255.0f));

  std::string msg;
  CHECK(error_of(dir / "missing.gz", dir / "lab.gz", &msg) == nubo::Errc::not_found);
  CHECK_THAT(msg, Catch::Contains("missing.gz"));
  write_gz(dir / "magic.gz", images(0x1234, 4, 1000));
  CHECK(error_of(dir / "magic.gz", dir / "lab.gz", &msg) == nubo::Errc::corrupt);
  CHECK_THAT(msg, Catch::Contains("magic"));
  write_gz(dir / "short.gz", images(0x803, 4, 30));
  CHECK(error_of(dir / "short.gz", dir / "lab.gz", &msg) == nubo::Errc::corrupt);
  CHECK_THAT(msg, Catch::Contains("truncated"));
  write_gz(dir / "huge.gz", images(0x803, 0xffffffffu, 40));
  CHECK(error_of(dir / "huge.gz", dir / "lab.gz", &msg) == nubo::Errc::corrupt);
  CHECK_THAT(msg, Catch::Contains("implausible"));
  {  // a damaged gzip stream
    std::ofstream f(dir / "junk.gz", std::ios::binary);
    f << "\x1f\x8b\x08\x00garbage that is not deflate data at all.............";
  }
  CHECK(error_of(dir / "junk.gz", dir / "lab.gz") == nubo::Errc::corrupt);
  write_gz(dir / "lab5.gz", labels(5));
  CHECK(error_of(dir / "img.gz", dir / "lab5.gz", &msg) == nubo::Errc::corrupt);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Fashion-MNIST from Debian's package", "[train]") {
  if (!std::filesystem::exists(std::string(nubo::kFashionMnistDir) +
                               "/t10k-images-idx3-ubyte.gz")) {
    NUBO_SKIP("dataset-fashion-mnist is not installed");
  }
  auto test = nubo::load_fashion_mnist("test");
  CHECK(test->size() == 10000);
  CHECK(test->features() == 784);
  CHECK(test->classes() == 10);
  CHECK_THROWS_AS(nubo::load_fashion_mnist("validation"), nubo::Error);
}
