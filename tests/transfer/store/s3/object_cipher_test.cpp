// Encrypted objects' blocks on their own (no server): sizes each way, ranges, sealing that a
// resumed upload repeats byte for byte, and every way of tampering refused, naming the block.
#include <catch2/catch.hpp>

#include "../../helpers.hpp"
#include "common/crypto.hpp"
#include "nubo/error.hpp"
#include "transfer/keys/object_cipher.hpp"

using nubo::store::ObjectCipher;

namespace {

nubo::transfer::KeySource keys_of(unsigned char fill) {
  nubo::transfer::Key k{};
  k.fill(static_cast<std::byte>(fill));
  return nubo::transfer::KeySource::of(k);
}

std::vector<std::byte> random_file(std::size_t size, std::uint64_t seed) {
  const auto text = nubo_test::random_bytes(size, seed);
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

}  // namespace

TEST_CASE("an encrypted object's size follows from its file's, and only such sizes are accepted",
          "[s3]") {
  constexpr auto B = ObjectCipher::kBlock, S = ObjectCipher::kSealedBlock;
  for (std::uint64_t plain :
       {std::uint64_t{0}, std::uint64_t{1}, B - 1, B, B + 1, 3 * B, 5 * B + 77}) {
    CAPTURE(plain);
    CHECK(ObjectCipher::plain_size(ObjectCipher::sealed_size(plain), "o") == plain);
  }
  CHECK(ObjectCipher::sealed_size(0) == 28);  // an empty file is one empty block
  CHECK(ObjectCipher::sealed_size(B) == S);
  for (std::uint64_t bad : {std::uint64_t{0}, std::uint64_t{27}, S + 10, S + 28}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(ObjectCipher::plain_size(bad, "s3://b/o"),
                      Catch::Contains("s3://b/o") && Catch::Contains("cut short or extended"));
  }
  // Ranges: whole blocks from a block boundary, the last range to the object's end.
  CHECK(ObjectCipher::sealed_range(0, 2 * B, 5 * B + 77) == std::pair{std::uint64_t{0}, 2 * S});
  CHECK(ObjectCipher::sealed_range(4 * B, B + 77, 5 * B + 77) ==
        std::pair{4 * S, ObjectCipher::sealed_size(5 * B + 77)});
  CHECK(ObjectCipher::sealed_range(0, 0, 0) == std::pair{std::uint64_t{0}, std::uint64_t{28}});
}

TEST_CASE("blocks sealed and opened: the same file seals the same, other files do not", "[s3]") {
  const auto file = random_file(3 * ObjectCipher::kBlock + 500, 1);
  auto cipher = ObjectCipher::create(keys_of(1));
  std::vector<std::byte> sealed, again, opened;
  cipher.seal(file, 0, file.size(), sealed);
  CHECK(sealed.size() == ObjectCipher::sealed_size(file.size()));
  // A resumed upload reopens the data key from its journal and must make the same parts.
  auto resumed = ObjectCipher::from_saved_keys(keys_of(1), cipher.saved_keys(), "journal");
  resumed.seal(std::span(file).subspan(ObjectCipher::kBlock), 1, file.size(), again);
  CHECK(std::equal(again.begin(), again.end(), sealed.begin() + ObjectCipher::kSealedBlock));
  resumed.open(sealed, 0, file.size(), opened, "o");
  CHECK(opened == file);
  // No plaintext left in the sealed bytes.
  const std::vector<std::byte> probe(file.begin() + 1000, file.begin() + 1032);
  CHECK(std::search(sealed.begin(), sealed.end(), probe.begin(), probe.end()) == sealed.end());
  // Another object under the same key seals the same file to other bytes.
  auto other = ObjectCipher::create(keys_of(1));
  other.seal(file, 0, file.size(), again);
  CHECK(again != sealed);
  // The file's hash travels sealed, and comes back.
  const auto metadata = cipher.metadata("0123456789abcdef0123456789abcdef");
  CHECK(metadata.at("nubo-sealed-xxh3-128").find("0123456789abcdef") == std::string::npos);
  CHECK(resumed.plain_hash(metadata, "o") == "0123456789abcdef0123456789abcdef");
  CHECK_THROWS_WITH(other.plain_hash(metadata, "s3://b/o"),
                    Catch::Contains("s3://b/o") && Catch::Contains("does not authenticate"));
}

TEST_CASE("a flipped bit, swapped blocks, a block from another object and a cut are refused",
          "[s3]") {
  const auto file = random_file(3 * ObjectCipher::kBlock, 2);
  auto cipher = ObjectCipher::create(keys_of(2));
  std::vector<std::byte> sealed, out;
  cipher.seal(file, 0, file.size(), sealed);
  const auto S = ObjectCipher::kSealedBlock;

  auto flipped = sealed;
  flipped[S + 100] ^= std::byte{4};
  CHECK_THROWS_WITH(
      cipher.open(flipped, 0, file.size(), out, "s3://b/o"),
      Catch::Contains("s3://b/o: block 1") && Catch::Contains("does not authenticate"));

  auto swapped = sealed;
  std::swap_ranges(swapped.begin(), swapped.begin() + S, swapped.begin() + S);
  CHECK_THROWS_WITH(cipher.open(swapped, 0, file.size(), out, "o"), Catch::Contains("block 0"));

  std::vector<std::byte> foreign;
  ObjectCipher::create(keys_of(2)).seal(file, 0, file.size(), foreign);
  std::copy(foreign.begin() + S, foreign.begin() + 2 * S, swapped.begin() + S);
  std::copy(sealed.begin(), sealed.begin() + S, swapped.begin());
  CHECK_THROWS_WITH(cipher.open(swapped, 0, file.size(), out, "o"), Catch::Contains("block 1"));

  // Cut after two blocks: the second was not sealed as the last one.
  const std::vector<std::byte> cut(sealed.begin(), sealed.begin() + 2 * S);
  CHECK_THROWS_WITH(cipher.open(cut, 0, 2 * ObjectCipher::kBlock, out, "o"),
                    Catch::Contains("block 1"));
  // Bytes missing from what a range returned.
  const std::vector<std::byte> short_range(sealed.begin(), sealed.end() - 1);
  CHECK_THROWS_WITH(cipher.open(short_range, 0, file.size(), out, "o"),
                    Catch::Contains("block 2 is truncated"));
}

TEST_CASE("an encrypted object without its key, or with another, names the key it needs", "[s3]") {
  auto cipher = ObjectCipher::create(keys_of(3));
  const auto metadata = cipher.metadata("h");
  const auto id = keys_of(3).describe().substr(4);
  CHECK_FALSE(ObjectCipher::for_object({}, {{"nubo-xxh3-128", "x"}}, "o"));
  CHECK_THROWS_WITH(
      ObjectCipher::for_object({}, metadata, "s3://b/o"),
      Catch::Contains("s3://b/o is encrypted") && Catch::Contains("--key") && Catch::Contains(id));
  CHECK_THROWS_WITH(ObjectCipher::for_object(keys_of(4), metadata, "o"),
                    Catch::Contains("encrypted with key " + id));
  CHECK(ObjectCipher::for_object(keys_of(3), metadata, "o"));
  auto future = metadata;
  future["nubo-encryption"] = "aes-512-magic";
  CHECK_THROWS_WITH(ObjectCipher::for_object(keys_of(3), future, "o"),
                    Catch::Contains("does not know"));
  auto broken = metadata;
  broken["nubo-key-block"] = "zz";
  CHECK_THROWS_WITH(ObjectCipher::for_object(keys_of(3), broken, "o"),
                    Catch::Contains("key block"));
  broken["nubo-key-block"] = std::string(208, '0');
  CHECK_THROWS_WITH(ObjectCipher::for_object(keys_of(3), broken, "o"),
                    Catch::Contains("checksum mismatch"));
}
