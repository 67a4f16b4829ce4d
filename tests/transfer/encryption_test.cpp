// Encrypted archives (format 2.1): round trips with the right key; no key, a wrong key, a flipped
// tag bit, swapped chunks and a chunk copied from another archive under the same key are each
// refused, naming the chunk, and nothing decrypted wrongly is written; nothing of the content
// or the names can be read from the archive's bytes; key files and a resumed encrypted pack.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "error_of.hpp"
#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_reader.hpp"
#include "transfer/file_io.hpp"
#include "transfer/format/format.hpp"
#include "transfer/hash.hpp"
#include "transfer/keys/archive_cipher.hpp"
#include "transfer/pipeline/progress.hpp"

namespace xfer = nubo::transfer;
namespace fmt = nubo::transfer::format;
using nubo_test::error_of;
using nubo_test::TempDir;

namespace {

constexpr std::uint64_t kChunk = 16 << 10;
const std::string kSecretText = "the launch code is 0000, and nobody must read this line\n";

void make_tree(const std::string& root) {
  nubo_test::write_file(root + "/plans for mars.txt", kSecretText);
  nubo_test::write_file(root + "/weights.bin", nubo_test::random_bytes(5 * kChunk, 7));
  nubo_test::write_file(root + "/notes/long.txt", nubo_test::text_bytes(3 * kChunk, 8));
  nubo_test::make_dirs(root + "/empty");
}

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

std::string text_of(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

xfer::PackOptions encrypted(const std::string& key, xfer::Codec codec = xfer::Codec::zstd) {
  return {.codec = codec, .chunk_size = kChunk, .sync = false, .key_file = key};
}

// Rewrites the payload of the record at `at` in place and recomputes the record header's
// payload check and seal, as an attacker who knows the format (but not the key) would.
void forge_payload(const std::string& archive, std::uint64_t at, const std::string& payload) {
  auto fd = xfer::open_write(archive);
  std::array<std::byte, fmt::kRecordHeaderSize> head{};
  fd.pread_exact(head, at, "record header");
  auto r = fmt::decode_record_header(head, kChunk, fmt::kSealOverhead);
  REQUIRE(r.stored_size == payload.size());
  auto bytes = xfer::as_bytes(payload);
  r.payload_check = fmt::payload_check(bytes);
  fd.pwrite_all(fmt::encode_record_header(r), at);
  fd.pwrite_all(bytes, at + fmt::kRecordHeaderSize);
}

std::string payload_at(const std::string& archive, const fmt::IndexChunk& c) {
  auto all = nubo_test::read_file(archive);
  return all.substr(c.record_offset + fmt::kRecordHeaderSize, c.stored_size);
}

}  // namespace

TEST_CASE("an encrypted archive comes back whole with its key, and its bytes reveal nothing") {
  TempDir dir;
  make_tree(dir / "src");
  xfer::keygen(dir / "k.key");
  auto archive = dir / "a.nubo";
  // Stored raw (codec none): the plaintext would be in the archive verbatim without encryption.
  auto packed = xfer::pack({dir / "src"}, archive, encrypted(dir / "k.key", xfer::Codec::none));
  CHECK(packed.files == 3);

  const auto bytes = nubo_test::read_file(archive);
  CHECK(bytes.find(kSecretText.substr(0, 20)) == std::string::npos);
  CHECK(bytes.find("plans for mars") == std::string::npos);
  CHECK(bytes.find("weights.bin") == std::string::npos);

  auto entries = xfer::list(archive, dir / "k.key");
  REQUIRE(entries.size() == 6);
  CHECK(xfer::verify(archive, {.key_file = dir / "k.key"}).files == 3);
  xfer::unpack(archive, dir / "out", {.sync = false, .key_file = dir / "k.key"});
  CHECK(nubo_test::same_tree(dir / "src", dir / "out/src"));
  xfer::Reader reader(archive, dir / "k.key");
  CHECK(text_of(reader.read("src/plans for mars.txt", 4, 6)) == "launch");

  // The same tree packed twice makes two archives with nothing in common: each has its own
  // archive id and data key, and every record a fresh nonce.
  xfer::pack({dir / "src"}, dir / "b.nubo", encrypted(dir / "k.key", xfer::Codec::none));
  const auto key = xfer::read_key_file(dir / "k.key");
  auto a = xfer::ArchiveFile::open(archive, xfer::KeySource::of(key));
  auto b = xfer::ArchiveFile::open(dir / "b.nubo", xfer::KeySource::of(key));
  CHECK(a.header().key->archive_id != b.header().key->archive_id);
  CHECK(a.header().key->wrapped != b.header().key->wrapped);
  const auto& ca = a.index().chunks.back();
  const auto& cb = b.index().chunks.back();
  REQUIRE(ca.record_offset == cb.record_offset);
  CHECK(payload_at(archive, ca) != payload_at(dir / "b.nubo", cb));
}

TEST_CASE("an encrypted archive without its key, or with another, names the key it needs") {
  TempDir dir;
  make_tree(dir / "src");
  xfer::keygen(dir / "k.key");
  xfer::keygen(dir / "other.key");
  auto archive = dir / "a.nubo";
  xfer::pack({dir / "src"}, archive, encrypted(dir / "k.key"));
  nubo::Errc code{};
  auto why = error_of([&] { xfer::list(archive); }, &code);
  CHECK(code == nubo::Errc::invalid_argument);
  CHECK(why.find("is encrypted: give its key file") != std::string::npos);
  auto wrong =
      error_of([&] { xfer::unpack(archive, dir / "out", {.key_file = dir / "other.key"}); });
  CHECK(wrong.find("is encrypted with key") != std::string::npos);
  CHECK(wrong.find("the key given is key") != std::string::npos);
  CHECK_FALSE(exists(dir / "out/src/plans for mars.txt"));
  CHECK_THROWS_WITH(xfer::verify(archive, {}), Catch::Contains("give its key file"));
  CHECK_THROWS_WITH(xfer::Reader(archive), Catch::Contains("give its key file"));
  // A key given for an archive that is not encrypted is not needed: it is read as it is.
  xfer::pack({dir / "src"}, dir / "plain.nubo", {.chunk_size = kChunk, .sync = false});
  CHECK(xfer::list(dir / "plain.nubo", dir / "k.key").size() == 6);
}

TEST_CASE("altered, swapped and transplanted records of an encrypted archive are refused") {
  TempDir dir;
  make_tree(dir / "src");
  xfer::keygen(dir / "k.key");
  const auto key = xfer::read_key_file(dir / "k.key");
  auto archive = dir / "a.nubo";
  auto pristine = dir / "pristine.nubo";
  // Random content stored raw: every chunk of weights.bin has the same stored size, so that
  // one can take another's place.
  xfer::pack({dir / "src"}, pristine, encrypted(dir / "k.key", xfer::Codec::none));
  const auto a = xfer::ArchiveFile::open(pristine, xfer::KeySource::of(key));
  std::size_t weights = 0;
  for (std::size_t i = 0; i < a.index().entries.size(); ++i)
    if (a.index().entries[i].meta.path == "src/weights.bin") weights = i;
  REQUIRE(a.index().entries[weights].chunk_count == 5);
  const auto& c1 = a.chunk(weights, 1);
  const auto& c2 = a.chunk(weights, 2);

  auto refused = [&](const std::string& what) {
    INFO(what);
    auto why = error_of([&] { xfer::verify(archive, {.key_file = dir / "k.key"}); });
    CHECK(why.find("file 'src/weights.bin' chunk") != std::string::npos);
    CHECK(why.find("does not authenticate") != std::string::npos);
    auto unpack_why = error_of(
        [&] { xfer::unpack(archive, dir / "out", {.sync = false, .key_file = dir / "k.key"}); });
    CHECK(unpack_why.find("does not authenticate") != std::string::npos);
    CHECK_FALSE(exists(dir / "out/src/weights.bin"));
  };

  SECTION("a flipped bit of a chunk's tag") {
    nubo_test::write_file(archive, nubo_test::read_file(pristine));
    auto p = payload_at(archive, c1);
    p.back() = static_cast<char>(p.back() ^ 1);
    forge_payload(archive, c1.record_offset, p);
    refused("tag");
  }
  SECTION("a flipped bit of a chunk's ciphertext") {
    nubo_test::write_file(archive, nubo_test::read_file(pristine));
    auto p = payload_at(archive, c1);
    p[100] = static_cast<char>(p[100] ^ 0x40);
    forge_payload(archive, c1.record_offset, p);
    refused("ciphertext");
  }
  SECTION("two chunks swapped") {
    nubo_test::write_file(archive, nubo_test::read_file(pristine));
    auto p1 = payload_at(archive, c1), p2 = payload_at(archive, c2);
    forge_payload(archive, c1.record_offset, p2);
    forge_payload(archive, c2.record_offset, p1);
    refused("swap");
  }
  SECTION("a chunk copied from another archive encrypted with the same key") {
    nubo_test::write_file(dir / "src/weights.bin", nubo_test::random_bytes(5 * kChunk, 99));
    xfer::pack({dir / "src"}, dir / "other.nubo", encrypted(dir / "k.key", xfer::Codec::none));
    const auto b = xfer::ArchiveFile::open(dir / "other.nubo", xfer::KeySource::of(key));
    nubo_test::write_file(archive, nubo_test::read_file(pristine));
    forge_payload(archive, c1.record_offset, payload_at(dir / "other.nubo", b.chunk(weights, 1)));
    refused("transplant");
  }
}

TEST_CASE("an encrypted pack resumes with its key, and starts over with another") {
  TempDir dir;
  make_tree(dir / "src");
  nubo_test::write_file(dir / "src/more.bin", nubo_test::random_bytes(40 * kChunk, 9));
  xfer::keygen(dir / "k.key");
  xfer::keygen(dir / "other.key");
  auto archive = dir / "a.nubo";
  xfer::ProgressTracker::set_interval_for_testing(std::chrono::milliseconds(0));
  auto cancel_halfway = [&](const std::string& key) {
    auto o = encrypted(key);
    o.memory_limit = 1 << 20;
    o.progress = [](const xfer::Progress& p) { return p.bytes_done < p.bytes_total / 2; };
    CHECK_THROWS_AS(xfer::pack({dir / "src"}, archive, o), nubo::Error);
  };
  cancel_halfway(dir / "k.key");
  auto resumed = xfer::pack({dir / "src"}, archive, encrypted(dir / "k.key"));
  CHECK(resumed.resumed);
  CHECK(resumed.bytes_skipped > 0);
  xfer::unpack(archive, dir / "out", {.sync = false, .key_file = dir / "k.key"});
  CHECK(nubo_test::same_tree(dir / "src", dir / "out/src"));

  std::remove(archive.c_str());
  cancel_halfway(dir / "k.key");
  auto restarted = xfer::pack({dir / "src"}, archive, encrypted(dir / "other.key"));
  CHECK_FALSE(restarted.resumed);
  CHECK(xfer::verify(archive, {.key_file = dir / "other.key"}).files == 4);
  CHECK_THROWS_WITH(xfer::list(archive, dir / "k.key"), Catch::Contains("is encrypted with key"));
}

TEST_CASE("key files: made once, read as hex or raw bytes, and bad ones named") {
  TempDir dir;
  xfer::keygen(dir / "k.key");
  struct stat st {};
  REQUIRE(::stat((dir / "k.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(nubo_test::read_file(dir / "k.key").size() == 65);  // 64 hex digits and a newline
  CHECK_THROWS_WITH(xfer::keygen(dir / "k.key"), Catch::Contains("never replaced"));

  const auto hex = xfer::read_key_file(dir / "k.key");
  nubo_test::write_file(dir / "raw.key",
                        std::string(reinterpret_cast<const char*>(hex.data()), 32));
  CHECK(xfer::read_key_file(dir / "raw.key") == hex);
  nubo_test::write_file(dir / "spaced.key", "  " + nubo_test::read_file(dir / "k.key") + "\n\n");
  CHECK(xfer::read_key_file(dir / "spaced.key") == hex);

  nubo::Errc code{};
  CHECK(error_of([&] { xfer::read_key_file(dir / "missing.key"); }, &code).find("keygen") !=
        std::string::npos);
  CHECK(code == nubo::Errc::not_found);
  nubo_test::write_file(dir / "short.key", "abcd");
  CHECK_THROWS_WITH(xfer::read_key_file(dir / "short.key"),
                    Catch::Contains("64 hexadecimal digits") && Catch::Contains("4 bytes"));
  nubo_test::write_file(dir / "bad.key", std::string(63, 'a') + "g");
  CHECK_THROWS_WITH(xfer::read_key_file(dir / "bad.key"),
                    Catch::Contains("character 64 is not a hexadecimal digit"));
  nubo_test::write_file(dir / "big.key", std::string(10000, 'a'));
  CHECK_THROWS_WITH(xfer::read_key_file(dir / "big.key"),
                    Catch::Contains("more than a key file may have"));
  // A key that cannot be read stops a pack before anything is written.
  nubo_test::write_file(dir / "src/a.txt", "a");
  CHECK_THROWS_WITH(xfer::read_key_file(dir / "src"), Catch::Contains("not a regular file"));
  CHECK_THROWS_AS(xfer::pack({dir / "src"}, dir / "a.nubo", encrypted(dir / "short.key")),
                  nubo::Error);
  CHECK_FALSE(exists(dir / "a.nubo"));
}

TEST_CASE("an altered key block or header flag is refused") {
  TempDir dir;
  make_tree(dir / "src");
  xfer::keygen(dir / "k.key");
  auto archive = dir / "a.nubo";
  xfer::pack({dir / "src"}, archive, encrypted(dir / "k.key"));
  const auto bytes = nubo_test::read_file(archive);
  // A bit of the wrapped data key, with the key block's own check recomputed: GCM catches it.
  auto h = fmt::decode_header(xfer::as_bytes(bytes));
  h.key->wrapped[6] ^= std::byte{1};
  auto head = fmt::encode_header(h);
  auto forged = bytes;
  forged.replace(0, head.size(), reinterpret_cast<const char*>(head.data()), head.size());
  nubo_test::write_file(archive, forged);
  CHECK_THROWS_WITH(xfer::list(archive, dir / "k.key"), Catch::Contains("key block"));
  // An unknown flag is refused as made by a newer nubo, not misread.
  auto flagged = bytes;
  flagged[20] = static_cast<char>(flagged[20] | 4);
  std::array<std::byte, 8> check{};
  xfer::put_le<std::uint64_t>(
      check.data(), xfer::hash64(xfer::as_bytes(std::string_view(flagged).substr(0, 56))));
  flagged.replace(56, 8, reinterpret_cast<const char*>(check.data()), 8);
  nubo_test::write_file(archive, flagged);
  CHECK_THROWS_WITH(xfer::list(archive, dir / "k.key"), Catch::Contains("not understood"));
}

TEST_CASE("a KMS record round trips in the header, and a damaged one is refused") {
  fmt::Header h;
  h.version_minor = fmt::kKmsMinor;
  h.key = fmt::KeyBlock{};
  h.kms = fmt::KmsKey{"arn:aws:kms:us-east-1:123456789012:key/k", std::vector<std::byte>(184)};
  auto bytes = fmt::encode_header(h);
  CHECK(bytes.size() == h.size());
  CHECK(h.size() == fmt::kHeaderSize + fmt::kKeyBlockSize + 4 + 40 + 184 + 8);
  const auto back = fmt::decode_header(bytes);
  REQUIRE(back.kms);
  CHECK(*back.kms == *h.kms);
  CHECK(back.size() == h.size());
  using Catch::Contains;
  // Cut short, a flipped byte, and lengths out of bounds (the checks recomputed).
  CHECK_THROWS_WITH(fmt::decode_header(xfer::Bytes(bytes).first(bytes.size() - 1)),
                    Contains("truncated"));
  auto flipped = bytes;
  flipped[fmt::kHeaderSize + fmt::kKeyBlockSize + 10] ^= std::byte{1};
  CHECK_THROWS_WITH(fmt::decode_header(flipped), Contains("KMS record checksum mismatch"));
  auto empty_id = bytes;
  empty_id[fmt::kHeaderSize + fmt::kKeyBlockSize] = std::byte{0};
  empty_id[fmt::kHeaderSize + fmt::kKeyBlockSize + 1] = std::byte{0};
  CHECK_THROWS_WITH(fmt::decode_kms_record(xfer::Bytes(empty_id).subspan(168), "h"),
                    Contains("out of bounds"));
  CHECK_THROWS_WITH(fmt::decode_kms_record(xfer::Bytes(bytes).subspan(168, 3), "h"),
                    Contains("truncated"));
}
