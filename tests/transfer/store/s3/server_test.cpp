// Object storage against a real S3-compatible server on loopback (run by with_s3_server.py,
// which sets AWS_ENDPOINT_URL and test credentials): objects, multipart uploads resumed after a
// cancel, downloads resumed and verified, and the errors a person can act on.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../../../train/helpers.hpp"
#include "../../helpers.hpp"
#include "error_of.hpp"
#include "nubo/error.hpp"
#include "nubo/s3.hpp"
#include "nubo/transfer.hpp"
#include "scoped_env.hpp"
#include "transfer/archive/archive_reader.hpp"
#include "transfer/copy/copy.hpp"
#include "transfer/copy/copy_between.hpp"
#include "transfer/keys/object_cipher.hpp"
#include "transfer/pipeline/progress.hpp"
#include "transfer/store/s3/client.hpp"

namespace s3 = nubo::s3;
using nubo_test::error_of;
using nubo_test::ScopedEnv;
using nubo_test::TempDir;

namespace {

s3::Client client() {
  REQUIRE(std::getenv("NUBO_S3_TEST_SERVER"));  // never a real endpoint
  return s3::Client(s3::load_config());
}

std::string fresh_bucket() {
  static int n = 0;
  auto name = "nubo-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
  client().create_bucket(name);
  return name;
}

// Packs in 1 MiB chunks, without fdatasync, on `threads` threads.
nubo::transfer::PackOptions quick_pack(int threads) {
  nubo::transfer::PackOptions o;
  o.chunk_size = 1 << 20;
  o.sync = false;
  o.threads = threads;
  return o;
}

// Every progress report reaches the callback while it lives: a cancel comes at the byte asked.
struct ProgressEveryCall {
  ProgressEveryCall() {
    nubo::transfer::ProgressTracker::set_interval_for_testing(std::chrono::milliseconds(0));
  }
  ~ProgressEveryCall() {
    nubo::transfer::ProgressTracker::set_interval_for_testing(std::chrono::milliseconds(100));
  }
};

nubo::transfer::CopyOptions small_parts() {
  nubo::transfer::CopyOptions o;
  o.part_size = 5 << 20;  // S3's smallest part
  o.streams = 3;
  o.sync = false;
  return o;
}

}  // namespace

TEST_CASE("objects go up with their metadata and come back by range", "[s3][server]") {
  auto c = client();
  s3::ObjectUrl url{fresh_bucket(), "dir/hello world.txt"};
  const std::string text = "hello, object storage";
  c.put_object(url, nubo::transfer::as_bytes(text), {{"purpose", "test"}});
  auto info = c.head_object(url);
  REQUIRE(info);
  CHECK(info->size == text.size());
  CHECK(info->metadata.at("purpose") == "test");
  CHECK(info->etag == s3::md5_hex(s3::md5_of(nubo::transfer::as_bytes(text))));
  CHECK(c.get_range(url, 7, 6) == "object");
  CHECK(!c.head_object({url.bucket, "missing"}));
  c.delete_object(url);
  CHECK(!c.head_object(url));
}

TEST_CASE("a missing bucket and refused credentials get advice, never the secret", "[s3][server]") {
  auto c = client();
  nubo::Errc code{};
  auto why = error_of([&] { c.put_object({"no-such-bucket-here", "k"}, {}); }, &code);
  CHECK(code == nubo::Errc::not_found);
  CHECK_THAT(why, Catch::Contains("does not exist") && Catch::Contains("no-such-bucket-here"));
}

TEST_CASE("a large file goes up in parts and comes back identical", "[s3][server]") {
  TempDir t;
  nubo_test::write_file(t / "big", nubo_test::random_bytes((17 << 20) + 123, 1));
  auto c = client();
  s3::ObjectUrl url{fresh_bucket(), "data/big"};
  auto up = nubo::store::upload_file(c, t / "big", url, small_parts());
  CHECK(up.parts == 4);
  CHECK(up.bytes_sent == up.bytes);
  auto info = c.head_object(url);
  REQUIRE(info);
  CHECK(info->metadata.count("nubo-xxh3-128"));
  auto down = nubo::store::download_file(c, url, t / "copy", small_parts());
  CHECK(down.bytes == up.bytes);
  CHECK(nubo_test::read_file(t / "copy") == nubo_test::read_file(t / "big"));
  struct stat st {};
  CHECK(::stat((t / ".copy.nubo-part").c_str(), &st) != 0);
}

TEST_CASE("a cancelled upload resumes with the parts the server holds, or is aborted",
          "[s3][server]") {
  TempDir t;
  nubo_test::write_file(t / "big", nubo_test::random_bytes(26 << 20, 2));
  auto c = client();
  s3::ObjectUrl url{fresh_bucket(), "resumed"};
  auto o = small_parts();
  o.streams = 1;
  o.journal_dir = t / "journals";
  o.keep_partial = true;
  o.progress = [](const nubo::transfer::Progress& p) { return p.bytes_done < (10 << 20); };
  CHECK_THROWS_WITH(nubo::store::upload_file(c, t / "big", url, o), Catch::Contains("cancelled"));
  CHECK(!c.head_object(url));  // never half an object under its name
  o.progress = {};
  auto again = nubo::store::upload_file(c, t / "big", url, o);
  CHECK(again.bytes_resumed >= (10 << 20));
  CHECK(again.bytes_sent + again.bytes_resumed == again.bytes);
  REQUIRE(c.head_object(url));
  nubo::store::download_file(c, url, t / "back", small_parts());
  CHECK(nubo_test::read_file(t / "back") == nubo_test::read_file(t / "big"));

  // Without keep_partial, a cancel aborts: the next attempt starts over.
  s3::ObjectUrl other{url.bucket, "aborted"};
  o.keep_partial = false;
  o.progress = [](const nubo::transfer::Progress& p) { return p.bytes_done < (10 << 20); };
  CHECK_THROWS(nubo::store::upload_file(c, t / "big", other, o));
  o.progress = {};
  auto fresh = nubo::store::upload_file(c, t / "big", other, o);
  CHECK(fresh.bytes_resumed == 0);
}

TEST_CASE("a cancelled download resumes, and one that does not verify lands nothing",
          "[s3][server]") {
  TempDir t;
  nubo_test::write_file(t / "big", nubo_test::random_bytes(21 << 20, 3));
  auto c = client();
  s3::ObjectUrl url{fresh_bucket(), "down"};
  nubo::store::upload_file(c, t / "big", url, small_parts());
  auto o = small_parts();
  o.streams = 1;
  o.progress = [](const nubo::transfer::Progress& p) { return p.bytes_done < (10 << 20); };
  CHECK_THROWS_WITH(nubo::store::download_file(c, url, t / "copy", o),
                    Catch::Contains("cancelled"));
  struct stat st {};
  CHECK(::stat((t / "copy").c_str(), &st) != 0);  // no partial file under its name
  o.progress = {};
  auto again = nubo::store::download_file(c, url, t / "copy", o);
  CHECK(again.bytes_resumed >= (5 << 20));
  CHECK(nubo_test::read_file(t / "copy") == nubo_test::read_file(t / "big"));

  // An object whose content is not what its checksum says.
  s3::ObjectUrl lie{url.bucket, "lie"};
  c.put_object(lie, nubo::transfer::as_bytes(std::string("tampered")),
               {{"nubo-xxh3-128", std::string(32, '0')}});
  nubo::Errc code{};
  auto why = error_of([&] { nubo::store::download_file(c, lie, t / "lie", small_parts()); }, &code);
  CHECK(code == nubo::Errc::corrupt);
  CHECK(::stat((t / "lie").c_str(), &st) != 0);
}

TEST_CASE(
    "encrypted objects: sealed on the server, resumed with the same parts, refused when "
    "altered or without their key",
    "[s3][server]") {
  TempDir t;
  nubo::transfer::keygen(t / "k.key");
  nubo::transfer::keygen(t / "other.key");
  const auto big = nubo_test::random_bytes((13 << 20) + 5, 5);
  nubo_test::write_file(t / "big", big);
  nubo_test::write_file(t / "small", "a secret line of text\n");
  nubo_test::write_file(t / "empty", "");
  auto c = client();
  const auto bucket = fresh_bucket();
  auto o = small_parts();
  o.key_file = t / "k.key";
  o.journal_dir = t / "journals";

  // Small, empty and multipart objects come back identical with the key.
  for (const char* name : {"small", "empty", "big"}) {
    CAPTURE(name);
    s3::ObjectUrl url{bucket, name};
    nubo::store::upload_file(c, t / name, url, o);
    auto info = c.head_object(url);
    REQUIRE(info);
    CHECK(info->metadata.at("nubo-encryption") == "aes-256-gcm-1m-v1");
    CHECK(info->metadata.count("nubo-xxh3-128") == 0);  // no plaintext checksum
    const auto plain = nubo_test::read_file(t / name);
    CHECK(info->size == nubo::store::ObjectCipher::sealed_size(plain.size()));
    if (!plain.empty())
      CHECK(c.get_range(url, 0, info->size).find(plain.substr(0, 16)) == std::string::npos);
    nubo::store::download_file(c, url, t / (std::string(name) + ".back"), o);
    CHECK(nubo_test::read_file(t / (std::string(name) + ".back")) == plain);
  }

  // Without the key, or with another, nothing is written and the message names the key.
  auto no_key = small_parts();
  nubo::Errc code{};
  auto why = error_of(
      [&] {
        nubo::store::download_file(c, {bucket, "big"}, t / "nokey", no_key);
      },
      &code);
  CHECK(code == nubo::Errc::invalid_argument);
  CHECK_THAT(why, Catch::Contains("is encrypted") && Catch::Contains("--key"));
  no_key.key_file = t / "other.key";
  CHECK_THROWS_WITH(nubo::store::download_file(c, {bucket, "big"}, t / "nokey", no_key),
                    Catch::Contains("encrypted with key"));
  struct stat st {};
  CHECK(::stat((t / "nokey").c_str(), &st) != 0);

  // A cancelled encrypted upload resumes: its parts seal to the same bytes, so the server's
  // parts match and are not sent again.
  s3::ObjectUrl resumed{bucket, "resumed"};
  auto r = o;
  r.streams = 1;
  r.keep_partial = true;
  r.progress = [](const nubo::transfer::Progress& p) { return p.bytes_done < (5 << 20); };
  CHECK_THROWS_WITH(nubo::store::upload_file(c, t / "big", resumed, r),
                    Catch::Contains("cancelled"));
  r.progress = {};
  auto again = nubo::store::upload_file(c, t / "big", resumed, r);
  CHECK(again.bytes_resumed >= (5 << 20));
  nubo::store::download_file(c, resumed, t / "resumed.back", o);
  CHECK(nubo_test::read_file(t / "resumed.back") == big);

  // The object's bytes altered on the server (its metadata kept): refused, naming the block,
  // and nothing lands.
  s3::ObjectUrl altered{bucket, "altered"};
  auto info = c.head_object({bucket, "big"});
  auto body = c.get_range({bucket, "big"}, 0, info->size);
  body[nubo::store::ObjectCipher::kSealedBlock + 9] ^= 1;
  c.put_object(altered, nubo::transfer::as_bytes(body), info->metadata);
  why = error_of([&] { nubo::store::download_file(c, altered, t / "altered", o); }, &code);
  CHECK(code == nubo::Errc::corrupt);
  CHECK_THAT(why, Catch::Contains("block 1") && Catch::Contains("does not authenticate"));
  CHECK(::stat((t / "altered").c_str(), &st) != 0);
  // Another object's metadata (another data key) on these bytes.
  auto small_info = c.head_object({bucket, "small"});
  c.put_object(altered, nubo::transfer::as_bytes(c.get_range({bucket, "big"}, 0, info->size)),
               small_info->metadata);
  CHECK_THROWS_WITH(nubo::store::download_file(c, altered, t / "altered", o),
                    Catch::Contains("does not authenticate"));
  CHECK(::stat((t / "altered").c_str(), &st) != 0);
}

TEST_CASE("wrong credentials name the key id and the server's code", "[s3][server]") {
  auto bucket = fresh_bucket();
  // moto accepts any key; a server that checks signatures refuses this one. Either way the
  // secret never appears in what the user sees.
  ScopedEnv key("AWS_ACCESS_KEY_ID", "AKIDWRONGKEY"), secret("AWS_SECRET_ACCESS_KEY", "s3cr3t!");
  auto c = s3::Client(s3::load_config());
  auto why = error_of([&] { c.put_object({bucket, "x"}, {}); });
  CHECK(why.find("s3cr3t!") == std::string::npos);
}

TEST_CASE("an archive in a bucket is listed, read at random, verified and unpacked in place",
          "[s3][server]") {
  TempDir t;
  nubo_test::write_file(t / "src/big.bin", nubo_test::random_bytes(9 << 20, 4));
  nubo_test::write_file(t / "src/notes/a.txt", nubo_test::text_bytes(50000, 5));
  nubo::transfer::pack({t / "src"}, t / "a.nubo", quick_pack(0));
  auto c = client();
  s3::ObjectUrl url{fresh_bucket(), "archives/a.nubo"};
  nubo::store::upload_file(c, t / "a.nubo", url, small_parts());
  const auto remote = url.text();

  auto entries = nubo::transfer::list(remote);
  REQUIRE(entries.size() == 4);
  {
    // Listing reads the header, the trailer and the index: a block or two, not the data.
    auto archive = nubo::transfer::ArchiveFile::open(remote);
    CHECK(archive.source().bytes_fetched() <= (2u << 20));
    CHECK(archive.size() > (9u << 20));
  }
  CHECK(entries[1].path == "src/big.bin");
  nubo::transfer::Reader reader(remote);
  std::vector<std::byte> buffer(100);
  REQUIRE(reader.read("src/notes/a.txt", 1000, buffer) == 100);
  CHECK(std::string(reinterpret_cast<const char*>(buffer.data()), 100) ==
        nubo_test::text_bytes(50000, 5).substr(1000, 100));
  // A small file's read costs its bundle, not the 9 MiB file's chunks.
  CHECK(reader.bytes_fetched() <= (3u << 20));
  auto v = nubo::transfer::verify(remote);
  CHECK(v.files == 2);
  CHECK(v.bytes_transferred >= std::filesystem::file_size(t / "a.nubo"));
  nubo::transfer::UnpackOptions uo;
  uo.sync = false;
  auto u = nubo::transfer::unpack(remote, t / "out", uo);
  // Read ahead in large windows, every byte once: the archive, plus the blocks of the index and
  // of the small records around the data.
  CHECK(u.bytes_transferred >= std::filesystem::file_size(t / "a.nubo"));
  CHECK(u.bytes_transferred <= std::filesystem::file_size(t / "a.nubo") + (3u << 20));
  CHECK(nubo::transfer::verify(t / "a.nubo").bytes_transferred == 0);
  CHECK(nubo_test::same_tree(t / "src", t / "out/src"));
  CHECK_THROWS_WITH(nubo::transfer::list("s3://" + url.bucket + "/archives/missing.nubo"),
                    Catch::Contains("does not exist"));
}

TEST_CASE("pack writes an archive to a bucket as it packs, and resumes after a cancel",
          "[s3][server]") {
  TempDir t;
  nubo_test::write_file(t / "src/weights.bin", nubo_test::random_bytes(22 << 20, 6));
  nubo_test::write_file(t / "src/config.json", "{\"layers\": 12}");
  ScopedEnv cache("XDG_CACHE_HOME", (t / "cache").c_str());
  auto c = client();
  const s3::ObjectUrl url{fresh_bucket(), "ckpt/step-100.nubo"};
  auto po = quick_pack(2);
  po.level = 19;  // slow enough to be cancelled half way
  po.keep_partial = true;
  po.progress = [](const nubo::transfer::Progress& p) { return p.bytes_done < (12 << 20); };
  CHECK_THROWS_WITH(nubo::transfer::pack({t / "src"}, url.text(), po),
                    Catch::Contains("cancelled"));
  CHECK(!c.head_object(url));  // no half archive under its name
  po.progress = {};
  po.level = 0;
  auto s = nubo::transfer::pack({t / "src"}, url.text(), po);
  auto info = c.head_object(url);
  REQUIRE(info);
  CHECK(info->size == s.bytes_stored);
  // The first part (8 MiB) went up before the cancel and is not sent again.
  CHECK(s.resumed);
  CHECK(s.bytes_skipped >= (8 << 20) - (1 << 20));
  CHECK(s.bytes_transferred <= s.bytes_stored - (8 << 20));
  nubo::transfer::UnpackOptions uo;
  uo.sync = false;
  nubo::transfer::unpack(url.text(), t / "out", uo);
  CHECK(nubo_test::same_tree(t / "src", t / "out/src"));
  CHECK(nubo_test::tree(t / "cache/nubo/s3", false).empty());  // journal gone, nothing staged
}

TEST_CASE("a cancelled pack to a bucket aborts its upload unless told to keep it", "[s3][server]") {
  TempDir t;
  nubo_test::write_file(t / "src/weights.bin", nubo_test::random_bytes(20 << 20, 5));
  ScopedEnv cache("XDG_CACHE_HOME", (t / "cache").c_str());
  ProgressEveryCall every_call;
  auto c = client();
  const s3::ObjectUrl url{fresh_bucket(), "w.nubo"};
  auto po = quick_pack(1);
  po.progress = [](const nubo::transfer::Progress& p) { return p.bytes_done < (12 << 20); };
  CHECK_THROWS_WITH(nubo::transfer::pack({t / "src"}, url.text(), po),
                    Catch::Contains("cancelled"));
  CHECK(nubo_test::tree(t / "cache/nubo/s3", false).empty());  // nothing left to resume
  CHECK(!c.head_object(url));
  po.progress = {};
  auto s = nubo::transfer::pack({t / "src"}, url.text(), po);
  CHECK_FALSE(s.resumed);  // the first part went up, and was aborted with the upload
  CHECK(s.bytes_transferred == s.bytes_stored);
}

TEST_CASE("a resumed pack to a bucket keeps the parts whose sources did not change, encrypted too",
          "[s3][server]") {
  TempDir t;
  nubo_test::write_file(t / "src/a/one.bin", nubo_test::random_bytes(12 << 20, 7));
  nubo_test::write_file(t / "src/b/two.bin", nubo_test::random_bytes(12 << 20, 8));
  ScopedEnv cache("XDG_CACHE_HOME", (t / "cache").c_str());
  nubo::transfer::keygen(t / "k.key");
  ProgressEveryCall every_call;  // the cancel comes at 20 MiB exactly
  auto c = client();
  const auto bucket = fresh_bucket();
  for (const bool encrypted : {false, true}) {
    INFO("encrypted: " << encrypted);
    const s3::ObjectUrl url{bucket, encrypted ? "sealed.nubo" : "plain.nubo"};
    auto po = quick_pack(1);
    po.keep_partial = true;
    if (encrypted) po.key_file = t / "k.key";
    // Two whole parts (8 MiB each) made by the cancel: the first holds one.bin's start alone,
    // the second two.bin's start too.
    po.progress = [](const nubo::transfer::Progress& p) { return p.bytes_done < (20 << 20); };
    CHECK_THROWS_WITH(nubo::transfer::pack({t / "src"}, url.text(), po),
                      Catch::Contains("cancelled"));
    // two.bin changes: the part with its start is made again, the one before it is kept.
    nubo_test::write_file(t / "src/b/two.bin", nubo_test::random_bytes(12 << 20, 9));
    po.progress = {};
    auto s = nubo::transfer::pack({t / "src"}, url.text(), po);
    CHECK(s.resumed);  // one part kept (8 MiB and its records' headers), the rest sent
    CHECK(s.bytes_transferred <= s.bytes_stored - (8 << 20));
    CHECK(s.bytes_transferred + (9 << 20) >= s.bytes_stored);
    nubo::transfer::UnpackOptions uo;
    uo.sync = false;
    if (encrypted) uo.key_file = t / "k.key";
    const auto out = t / (encrypted ? "out-sealed" : "out-plain");
    nubo::transfer::unpack(url.text(), out, uo);
    CHECK(nubo_test::same_tree(t / "src", out + "/src"));
    nubo_test::write_file(t / "src/b/two.bin", nubo_test::random_bytes(12 << 20, 8));
  }
}

TEST_CASE("the trainer checkpoints to a bucket, prunes there, and resumes from it exactly",
          "[s3][server]") {
  TempDir t;
  ScopedEnv cache("XDG_CACHE_HOME", (t / "cache").c_str());
  const auto bucket = fresh_bucket();
  auto data = train_test::synthetic(256);
  auto team = train_test::cpu_team(1);
  auto o = train_test::small_options();
  o.checkpoint_dir = "s3://" + bucket + "/run1";
  o.checkpoint_every = 2;
  nubo::DataParallelTrainer a(team, o, data);
  a.fit(2);  // 8 steps: checkpoints at 2, 4, 6, 8; the newest 3 are kept
  auto c = client();
  CHECK(c.head_object(s3::parse_s3_url(a.checkpoint_path(8))));
  CHECK(!c.head_object(s3::parse_s3_url(a.checkpoint_path(2))));
  CHECK(a.checkpoint_path(8) == "s3://" + bucket + "/run1/ckpt-0000000008.nubo");
  CHECK(c.get_range({bucket, "run1/latest"}, 0, 21) == "ckpt-0000000008.nubo\n");
  std::vector<double> expect;
  for (int i = 0; i < 4; ++i) expect.push_back(a.step().loss);

  nubo::DataParallelTrainer b(team, o, data);
  CHECK(b.resume_latest() == a.checkpoint_path(8));
  std::vector<double> got;
  for (int i = 0; i < 4; ++i) got.push_back(b.step().loss);
  CHECK(got == expect);
  CHECK(a.parameters() == b.parameters());
}

namespace {

// A file of `size` bytes with 1 MiB of random data at each of `islands`, holes elsewhere.
void write_sparse(const std::string& path, std::uint64_t size,
                  const std::vector<std::uint64_t>& islands) {
  nubo_test::write_file(path, "");
  const int fd = ::open(path.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  for (const auto at : islands) {
    const auto data = nubo_test::random_bytes(1 << 20, at);
    REQUIRE(::pwrite(fd, data.data(), data.size(), static_cast<off_t>(at)) ==
            static_cast<ssize_t>(data.size()));
  }
  REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
  ::close(fd);
}

std::uint64_t allocated(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

}  // namespace

TEST_CASE("archives and trees go to a bucket and back: empty, sparse, many small, unicode names",
          "[s3][server]") {
  TempDir t;
  ScopedEnv cache("XDG_CACHE_HOME", (t / "cache").c_str());
  const std::string src = t / "src";
  nubo_test::write_file(src + "/empty", "");
  nubo_test::write_file(src + "/unicodé/日本語 ✓.txt", "こんにちは\n");
  for (int i = 0; i < 300; ++i)
    nubo_test::write_file(src + "/many/f" + std::to_string(i),
                          nubo_test::text_bytes(100 + static_cast<std::size_t>(i) * 37,
                                                static_cast<std::uint64_t>(i)));
  write_sparse(src + "/disk.img", 40 << 20, {0, 20 << 20});
  // A 3 GiB sparse file: the archive holds its data, not its holes, and it comes back sparse.
  const std::uint64_t huge = 3ull << 30;
  write_sparse(t / "huge/sparse.bin", huge, {0, 1ull << 30, huge - (1 << 20)});
  auto c = client();
  const auto bucket = fresh_bucket();

  nubo::transfer::PackOptions po;
  po.sync = false;
  const auto archive = "s3://" + bucket + "/round.nubo";
  auto packed = nubo::transfer::pack({src, t / "huge"}, archive, po);
  CHECK(packed.bytes_stored < (16 << 20));  // the data, not 3 GiB of holes
  nubo::transfer::UnpackOptions uo;
  uo.sync = false;
  nubo::transfer::unpack(archive, t / "out", uo);
  std::string why;
  CHECK(nubo_test::same_tree(src, t / "out/src", &why));
  INFO(why);
  CHECK(std::filesystem::file_size(t / "out/huge/sparse.bin") == huge);
  CHECK(allocated(t / "out/huge/sparse.bin") < (64 << 20));
  for (const std::uint64_t at : std::vector<std::uint64_t>{0, 1ull << 30, huge - (1 << 20)}) {
    std::ifstream f(t / "out/huge/sparse.bin", std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    std::string back(1 << 20, '\0');
    f.read(back.data(), static_cast<std::streamsize>(back.size()));
    CHECK(back == nubo_test::random_bytes(1 << 20, at));
  }
  CHECK(nubo::transfer::verify(archive).files == packed.files);

  // Plain objects: each file one object, its path (unicode and all) the key's rest.
  auto o = small_parts();
  auto up = nubo::transfer::copy(src, "s3://" + bucket + "/tree/", o);
  CHECK(up.files == 303);
  nubo::transfer::copy("s3://" + bucket + "/tree/", t / "back", o);
  CHECK(nubo_test::tree(src, false) == nubo_test::tree(t / "back/src", false));
  CHECK(nubo_test::first_wrong_file(t / "back", t.path()) == "");
}

TEST_CASE(
    "a bit flipped in an archive in a bucket is found by verify and unpack, and nothing "
    "corrupted lands",
    "[s3][server]") {
  TempDir t;
  nubo_test::write_file(t / "src/weights.bin", nubo_test::random_bytes(3 << 20, 11));
  nubo_test::write_file(t / "src/notes.txt", "kept\n");
  nubo::transfer::pack({t / "src"}, t / "a.nubo", quick_pack(0));
  auto bytes = nubo_test::read_file(t / "a.nubo");
  bytes[(3 << 20) / 2] = static_cast<char>(bytes[(3 << 20) / 2] ^ 0x10);  // in weights' 2nd chunk
  auto c = client();
  const s3::ObjectUrl url{fresh_bucket(), "flipped.nubo"};
  c.put_object(url, nubo::transfer::as_bytes(bytes));
  nubo::Errc code{};
  auto why = error_of([&] { nubo::transfer::verify(url.text()); }, &code);
  CHECK(code == nubo::Errc::corrupt);
  CHECK_THAT(why, Catch::Contains("weights.bin"));
  nubo::transfer::UnpackOptions uo;
  uo.sync = false;
  why = error_of([&] { nubo::transfer::unpack(url.text(), t / "out", uo); }, &code);
  CHECK(code == nubo::Errc::corrupt);
  CHECK_THAT(why, Catch::Contains("weights.bin"));
  struct stat st {};
  CHECK(::stat((t / "out/src/weights.bin").c_str(), &st) != 0);
}

TEST_CASE("an object over the store's copy limit is copied by the store in ranges of parts") {
  auto c = client();
  const auto bucket = fresh_bucket();
  const auto content = nubo_test::random_bytes(12 << 20, 77);
  const auto from = s3::parse_s3_url("s3://" + bucket + "/big.bin");
  const auto to = s3::parse_s3_url("s3://" + bucket + "/copy/big.bin");
  c.put_object(from, nubo::transfer::as_bytes(content), {{"nubo-xxh3-128", "kept"}});
  nubo::transfer::CopyOptions options;
  options.part_size = 5 << 20;
  // A limit of 1 MiB stands for S3's 5 GiB: UploadPartCopy ranges of 5 MiB, 5 MiB and 2 MiB.
  const auto s = nubo::store::copy_between(c, from, c, to, options, 1 << 20);
  CHECK(s.bytes_server_side == content.size());
  CHECK(s.bytes_sent == 0);
  CHECK(s.parts == 3);
  CHECK(c.get_range(to, 0, content.size()) == content);
  const auto info = c.head_object(to);
  REQUIRE(info);
  CHECK(info->etag.size() > 2);
  CHECK(info->etag.substr(info->etag.size() - 2) == "-3");
  CHECK(info->metadata.at("nubo-xxh3-128") == "kept");  // the source's, given to the upload
  // Its own destination, within one store, is refused.
  CHECK_THROWS_WITH(nubo::store::copy_between(c, from, c, from, options),
                    Catch::Contains("is its own destination"));
}

TEST_CASE("a streamed copy of another client's multipart object resumes from the parts sent") {
  auto c = client();
  const auto bucket = fresh_bucket();
  const auto from = s3::parse_s3_url("s3://" + bucket + "/theirs.bin");
  // Three parts of 5 MiB, 5 MiB and 1 MiB, as another client uploads them: no nubo checksum,
  // an ETag of the parts' MD5s.
  const auto content = nubo_test::random_bytes(11 << 20, 78);
  const auto id = c.create_multipart(from, {});
  std::vector<nubo::store::Part> parts;
  for (int k = 0; k < 3; ++k) {
    const auto at = static_cast<std::size_t>(k) * (5 << 20);
    const auto n = std::min<std::size_t>(5 << 20, content.size() - at);
    parts.push_back(
        c.upload_part(from, id, k + 1, nubo::transfer::as_bytes(content).subspan(at, n)));
  }
  c.complete_multipart(from, id, parts);
  // To another store (a file:// one: streamed), cancelled once a part is in, kept, then resumed.
  TempDir dir;
  const auto store = nubo::store::open(nubo::store::parse_url("file://" + dir.path() + "/"));
  const auto to = nubo::store::parse_url("file://" + dir.path() + "/copy.bin");
  nubo::transfer::CopyOptions options;
  options.streams = 1;
  options.keep_partial = true;
  options.journal_dir = dir / "journals";
  options.progress = [](const nubo::transfer::Progress& p) { return p.bytes_done == 0; };
  nubo::Errc code{};
  error_of([&] { nubo::store::copy_between(c, from, *store, to, options); }, &code);
  CHECK(code == nubo::Errc::cancelled);
  options.progress = nullptr;
  options.streams = 2;
  const auto s = nubo::store::copy_between(c, from, *store, to, options);
  CHECK(s.bytes_resumed > 0);
  CHECK(s.bytes_resumed + s.bytes_sent == content.size());
  CHECK(nubo_test::read_file(dir / "copy.bin") == content);
}
