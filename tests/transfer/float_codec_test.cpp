// The float codec: byte planes of bf16, fp16 and fp32 tensors under zstd. Exact for every bit
// pattern (NaNs with payloads, infinities, denormals, signed zeros, a tail shorter than an
// element), refuses a damaged payload, recognises float tensors and nothing else, and `auto`
// takes it for them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "transfer/codec/codec.hpp"
#include "transfer/codec/float_planes.hpp"
#include "transfer/pipeline/auto_codec.hpp"

using namespace nubo::transfer;

namespace {

std::vector<std::byte> to_vector(const std::string& s) {
  auto b = as_bytes(s);
  return {b.begin(), b.end()};
}

// Weights as a trained layer holds them: normal, small, with the special values mixed in.
std::vector<std::byte> fp32_tensor(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.02f);
  std::vector<float> v(count);
  for (auto& x : v) x = d(rng);
  const float specials[] = {
      std::numeric_limits<float>::quiet_NaN(),  -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::denorm_min(), -0.0f,
      std::numeric_limits<float>::infinity(),   std::numeric_limits<float>::min() / 3};
  for (std::size_t i = 0; i < std::size(specials) && i * 997 < count; ++i) v[i * 997] = specials[i];
  if (count > 5) {  // a NaN with a payload of its own
    std::uint32_t bits = 0x7fc12345;
    std::memcpy(&v[5], &bits, 4);
  }
  std::vector<std::byte> out(count * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// The upper halves of fp32 values: bf16, NaNs and denormals included.
std::vector<std::byte> bf16_tensor(std::size_t count, unsigned seed) {
  auto f = fp32_tensor(count, seed);
  std::vector<std::byte> out(count * 2);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(&out[i * 2], &f[i * 4 + 2], 2);
  return out;
}

std::vector<std::byte> round_trip(CodecSetting s, const std::vector<std::byte>& raw,
                                  std::size_t* stored_size = nullptr) {
  Compressor c;
  Decompressor d;
  std::vector<std::byte> stored;
  const auto n = c.compress(s, raw, stored);
  if (stored_size) *stored_size = n;
  std::vector<std::byte> back(raw.size());
  if (n == 0) return raw;  // stored raw: nothing to decode
  d.decompress(s.codec, {stored.data(), n}, back);
  return back;
}

}  // namespace

TEST_CASE("byte planes are an exact permutation, with a tail shorter than an element") {
  for (std::size_t size : {0u, 1u, 2u, 3u, 5u, 7u, 8u, 9u, 4099u}) {
    for (int stride : {2, 4}) {
      INFO(size << " bytes, stride " << stride);
      auto raw = to_vector(nubo_test::random_bytes(size, size + static_cast<unsigned>(stride)));
      std::vector<std::byte> planes(size), back(size);
      split_planes(raw, stride, planes.data());
      join_planes(planes, stride, back.data());
      CHECK(back == raw);
      if (size >= 8) CHECK(planes[1] == raw[stride]);  // plane 0 holds every element's byte 0
    }
  }
}

TEST_CASE("the float codec round-trips every bit pattern, and saves over zstd on weights") {
  for (std::size_t extra : {0u, 1u, 3u}) {  // a chunk need not end on an element
    auto fp32 = fp32_tensor(100000, 1);
    auto bf16 = bf16_tensor(100000, 2);
    fp32.resize(fp32.size() + extra, std::byte{0x5a});
    bf16.resize(bf16.size() + extra, std::byte{0x5a});
    for (const auto* raw : {&fp32, &bf16}) {
      INFO((raw == &fp32 ? "fp32" : "bf16") << " + " << extra << " bytes");
      std::size_t planes = 0, plain = 0;
      CHECK(round_trip({ChunkCodec::floats, 3}, *raw, &planes) == *raw);
      round_trip({ChunkCodec::zstd, 3}, *raw, &plain);
      REQUIRE(planes > 0);
      CHECK((plain == 0 || planes < plain));  // zstd alone may not even pay
    }
  }
}

TEST_CASE("a damaged float payload is refused, never decoded into garbage") {
  Compressor c;
  Decompressor d;
  const auto raw = bf16_tensor(50000, 3);
  std::vector<std::byte> stored;
  const auto n = c.compress({ChunkCodec::floats, 3}, raw, stored);
  REQUIRE(n > 0);
  std::vector<std::byte> out(raw.size());
  auto bad = std::vector<std::byte>(stored.begin(), stored.begin() + static_cast<long>(n));
  bad[0] = std::byte{3};  // no element is 3 bytes wide
  CHECK_THROWS_WITH(d.decompress(ChunkCodec::floats, bad, out),
                    Catch::Contains("element width other than 2 or 4"));
  CHECK_THROWS_AS(d.decompress(ChunkCodec::floats, {stored.data(), n / 2}, out), nubo::Error);
  CHECK_THROWS_AS(d.decompress(ChunkCodec::floats, {}, out), nubo::Error);
  std::vector<std::byte> longer(raw.size() + 1);  // the frame declares another size
  CHECK_THROWS_AS(d.decompress(ChunkCodec::floats, {stored.data(), n}, longer), nubo::Error);
}

TEST_CASE("float tensors are recognised with their element width, while text and noise are not") {
  const auto fp32 = fp32_tensor(16384, 4);
  const auto bf16 = bf16_tensor(32768, 5);
  CHECK(plane_stats(fp32).float_like);
  CHECK(plane_stats(fp32).stride == 4);
  CHECK(plane_stats(bf16).float_like);
  CHECK(plane_stats(bf16).stride == 2);
  CHECK_FALSE(plane_stats(as_bytes(nubo_test::text_bytes(65536, 6))).float_like);
  CHECK_FALSE(plane_stats(as_bytes(nubo_test::random_bytes(65536, 7))).float_like);
  CHECK_FALSE(plane_stats({}).float_like);
}

TEST_CASE("auto takes the float codec for float tensors and keeps it off other data") {
  Compressor probe;
  AutoCodec a(2, 12, 0);
  CHECK(a.choose(bf16_tensor(1 << 19, 8), probe).setting.codec == ChunkCodec::floats);
  CHECK(a.choose(fp32_tensor(1 << 18, 9), probe).setting.codec == ChunkCodec::floats);
  const auto noise = nubo_test::random_bytes(1 << 20, 10);
  CHECK(a.choose(as_bytes(noise), probe).setting.codec == ChunkCodec::none);
  const auto text = nubo_test::text_bytes(1 << 20, 11);
  CHECK(a.choose(as_bytes(text), probe).setting.codec != ChunkCodec::floats);
}
