// The contract of store.hpp, checked against each store (NUBO_STORE_SCHEME: s3 and gs against a
// loopback S3 server, file against a temporary directory): objects round trip with their
// metadata, multipart uploads are whole or absent, ranges are exact, copies resume after a
// SIGKILL at random points and verify end to end, a flipped bit is refused, and a missing bucket
// or directory is an error naming it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <thread>

#include "../helpers.hpp"
#include "error_of.hpp"
#include "fresh_place.hpp"
#include "nubo/copy.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "scoped_env.hpp"
#include "transfer/copy/copy.hpp"
#include "transfer/store/object_source.hpp"
#include "transfer/store/store.hpp"

namespace store = nubo::store;
using nubo::Errc;
using nubo_test::error_of;
using nubo_test::TempDir;

namespace {

struct Place {
  TempDir dir;
  nubo_test::ScopedEnv cache{"XDG_CACHE_HOME", (dir / "cache").c_str()};
  std::string base = nubo_test::fresh_place(dir.path());
  store::ObjectUrl url(const std::string& key) const { return store::parse_url(base + key); }
  std::unique_ptr<store::Store> open() const { return store::open(url("")); }
};

// The code of the nubo::Error `f` throws; nullopt when it returns.
std::optional<Errc> code_of(const std::function<void()>& f) {
  Errc code{};
  if (error_of(f, &code) == "no error") return std::nullopt;
  return code;
}

nubo::transfer::CopyOptions small_parts() {
  nubo::transfer::CopyOptions o;
  o.part_size = 5 << 20;  // S3's smallest part
  o.streams = 2;
  o.sync = false;
  return o;
}

// Runs `work` in a child process and SIGKILLs it after `after`, unless it finished first:
// whether it was killed. A child that finished must have succeeded.
template <typename Work>
bool killed_at(std::chrono::microseconds after, Work work) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      work();
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + after;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return false;
}

}  // namespace

TEST_CASE("objects round trip with their metadata, by range, listed in order, and deleted",
          "[store]") {
  Place p;
  auto s = p.open();
  const std::string text = "hello, any store";
  s->put_object(p.url("dir/b.txt"), nubo::transfer::as_bytes(text), {{"purpose", "test"}});
  s->put_object(p.url("dir/a.txt"), nubo::transfer::as_bytes(std::string("a")));
  s->put_object(p.url("dir/sub/c.txt"), nubo::transfer::as_bytes(std::string()));
  const auto info = s->head_object(p.url("dir/b.txt"));
  REQUIRE(info);
  CHECK(info->size == text.size());
  CHECK(info->metadata.at("purpose") == "test");
  CHECK_FALSE(info->etag.empty());
  CHECK(s->get_range(p.url("dir/b.txt"), 7, 3) == "any");
  CHECK(s->get_range(p.url("dir/b.txt"), 0, text.size()) == text);
  CHECK(code_of([&] { s->get_range(p.url("dir/b.txt"), 10, 100); }) == Errc::corrupt);
  CHECK_FALSE(s->head_object(p.url("dir/missing")));

  const auto listed = s->list_objects(p.url("dir/"));
  REQUIRE(listed.size() == 3);
  CHECK(listed[0].first == p.url("dir/a.txt").key);
  CHECK(listed[1].first == p.url("dir/b.txt").key);
  CHECK(listed[1].second == text.size());
  CHECK(listed[2].first == p.url("dir/sub/c.txt").key);
  CHECK(s->list_objects(p.url("dir/b")).size() == 1);  // a prefix, not only a directory

  // Replaced whole, metadata and all.
  s->put_object(p.url("dir/b.txt"), nubo::transfer::as_bytes(std::string("new")));
  CHECK(s->head_object(p.url("dir/b.txt"))->metadata.count("purpose") == 0);
  s->delete_object(p.url("dir/b.txt"));
  CHECK_FALSE(s->head_object(p.url("dir/b.txt")));
  CHECK(s->list_objects(p.url("dir/")).size() == 2);
}

TEST_CASE("a multipart upload appears only when complete, resumes from the parts held, or aborts",
          "[store]") {
  Place p;
  auto s = p.open();
  const auto url = p.url("big.bin");
  const auto a = nubo_test::random_bytes(5 << 20, 1), b = nubo_test::random_bytes(1000, 2);
  const auto id = s->create_multipart(url, {{"k", "v"}});
  const auto second = s->upload_part(url, id, 2, nubo::transfer::as_bytes(b));
  auto first =
      s->upload_part(url, id, 1, nubo::transfer::as_bytes(nubo_test::random_bytes(5 << 20, 9)));
  first = s->upload_part(url, id, 1, nubo::transfer::as_bytes(a));  // sent again: replaces
  CHECK(first.etag == store::md5_hex(store::md5_of(nubo::transfer::as_bytes(a))));
  CHECK_FALSE(s->head_object(url));  // nothing under the name yet
  const auto held = s->list_parts(url, id);
  REQUIRE(held.size() == 2);
  CHECK(held[0].number == 1);
  CHECK(held[0].etag == first.etag);
  CHECK(held[1].size == b.size());
  s->complete_multipart(url, id, {first, second});
  const auto info = s->head_object(url);
  REQUIRE(info);
  CHECK(info->size == a.size() + b.size());
  CHECK(info->metadata.at("k") == "v");
  CHECK(s->get_range(url, a.size() - 2, 4) == a.substr(a.size() - 2) + b.substr(0, 2));
  CHECK(code_of([&] { s->list_parts(url, id); }) == Errc::not_found);  // completed

  const auto other = s->create_multipart(p.url("gone.bin"), {});
  s->upload_part(p.url("gone.bin"), other, 1, nubo::transfer::as_bytes(b));
  s->abort_multipart(p.url("gone.bin"), other);
  CHECK(code_of([&] { s->list_parts(p.url("gone.bin"), other); }) == Errc::not_found);
  CHECK_FALSE(s->head_object(p.url("gone.bin")));
  // Neither upload left anything a listing shows.
  const auto listed = s->list_objects(p.url(""));
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].first == url.key);
}

TEST_CASE("file://: an upload killed while it was being removed is gone, not half there",
          "[store]") {
  if (nubo_test::store_scheme() != "file") return;  // the layout on disk is file://'s
  Place p;
  auto s = p.open();
  const auto url = p.url("k/half.bin");
  const auto id = s->create_multipart(url, {});
  s->upload_part(url, id, 1, nubo::transfer::as_bytes(std::string(1000, 'x')));
  // A kill after the metadata went and before the parts did: the upload must read as gone (so a
  // resume starts over), where it once listed its parts and then failed to complete them.
  std::string metadata;
  for (const auto& e : std::filesystem::recursive_directory_iterator(p.dir.path()))
    if (e.path().filename() == "metadata" &&
        e.path().parent_path().filename().string().find(id) != std::string::npos)
      metadata = e.path().string();
  REQUIRE_FALSE(metadata.empty());
  std::filesystem::remove(metadata);
  CHECK(code_of([&] { s->list_parts(url, id); }) == Errc::not_found);
  CHECK(code_of([&] { s->complete_multipart(url, id, {}); }) == Errc::not_found);
}

TEST_CASE("an archive packed into the store is read by ranges, listed and unpacked", "[store]") {
  Place p;
  nubo_test::write_file(p.dir / "src/a.bin", nubo_test::random_bytes(3 << 20, 3));
  nubo_test::write_file(p.dir / "src/b.txt", nubo_test::text_bytes(200000, 4));
  nubo::transfer::PackOptions o;
  o.chunk_size = 1 << 20;
  o.sync = false;
  const auto archive = p.base + "x.nubo";
  const auto packed = nubo::transfer::pack({p.dir / "src"}, archive, o);
  CHECK(packed.bytes_transferred > 0);
  CHECK(packed.network_wait_seconds >= 0);
  CHECK(packed.network_wait_seconds <= packed.seconds);
  CHECK(nubo::transfer::list(archive).size() == 3);
  auto source = store::open_object_source(archive);
  const auto whole = store::open(p.url(""))->get_range(p.url("x.nubo"), 0, source->size());
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i) {  // random reads match the bytes
    const auto at = rng() % source->size();
    std::string got(std::min<std::uint64_t>(rng() % 3000000, source->size() - at), '\0');
    source->pread_exact(
        nubo::transfer::MutableBytes(reinterpret_cast<std::byte*>(got.data()), got.size()), at,
        "test");
    CHECK(got == whole.substr(at, got.size()));
  }
  nubo::transfer::UnpackOptions u;
  u.sync = false;
  const auto unpacked = nubo::transfer::unpack(archive, p.dir / "out", u);
  CHECK(unpacked.network_wait_seconds > 0);  // every range came from the store
  CHECK(nubo_test::same_tree(p.dir / "src", p.dir / "out/src"));
}

TEST_CASE("copies resume after SIGKILLs at random points and come back identical", "[store]") {
  Place p;
  const auto file = p.dir / "big.bin";
  nubo_test::write_file(file, nubo_test::random_bytes(23 << 20, 6));  // 5 parts of 5 MiB
  const auto url = p.url("k/big.bin");
  // Kills land at random points of a whole copy: its time measured first, on another key.
  auto t0 = std::chrono::steady_clock::now();
  store::upload_file(*store::open(url), file, p.url("k/reference.bin"), small_parts());
  const auto whole_up = std::chrono::steady_clock::now() - t0;
  std::mt19937 rng(7);
  const auto at_random = [&](std::chrono::steady_clock::duration whole) {
    return std::chrono::duration_cast<std::chrono::microseconds>(whole) * (10 + rng() % 80) / 100;
  };
  int killed = 0;
  while (killed < 3 && killed_at(at_random(whole_up), [&] {
           store::upload_file(*store::open(url), file, url, small_parts());
         }))
    ++killed;
  const auto up = store::upload_file(*store::open(url), file, url, small_parts());
  CHECK(up.bytes == 23u << 20);
  CHECK(killed > 0);
  t0 = std::chrono::steady_clock::now();
  store::download_file(*store::open(url), url, p.dir / "reference", small_parts());
  const auto whole_down = std::chrono::steady_clock::now() - t0;
  killed = 0;
  while (killed < 3 && killed_at(at_random(whole_down), [&] {
           store::download_file(*store::open(url), url, p.dir / "back", small_parts());
         }))
    ++killed;
  store::download_file(*store::open(url), url, p.dir / "back", small_parts());
  CHECK(killed > 0);
  CHECK(nubo_test::same_content(file, p.dir / "back"));
  // A tree through the public copy, both ways.
  nubo_test::write_file(p.dir / "tree/x/1.txt", "one");
  nubo_test::write_file(p.dir / "tree/2.bin", nubo_test::random_bytes(70000, 8));
  const auto sent = nubo::transfer::copy(p.dir / "tree", p.base + "t/", small_parts());
  CHECK(sent.files == 2);
  nubo::transfer::copy(p.base + "t/", p.dir / "tree-back", small_parts());
  CHECK(nubo_test::tree(p.dir / "tree", false) == nubo_test::tree(p.dir / "tree-back/tree", false));
  CHECK(nubo_test::first_wrong_file(p.dir / "tree-back", p.dir.path()) == "");
}

TEST_CASE("a download whose partial file is gone starts over instead of trusting its journal",
          "[store]") {
  // A download killed after it renamed its file into place, before it removed its journal,
  // leaves a journal of parts written into a file that is no longer there.
  Place p;
  const auto content = nubo_test::random_bytes(12 << 20, 11);
  nubo_test::write_file(p.dir / "f.bin", content);
  const auto url = p.url("f.bin");
  store::upload_file(*p.open(), p.dir / "f.bin", url, small_parts());
  auto options = small_parts();
  options.streams = 1;
  options.progress = [](const nubo::transfer::Progress& pr) { return pr.bytes_done < (6 << 20); };
  store::Options paced;
  paced.rate = 16 << 20;  // 12 MiB in about 0.75 s: the cancel comes between parts
  CHECK(code_of([&] {
          store::download_file(*store::open(url, paced), url, p.dir / "back.bin", options);
        }) == Errc::cancelled);
  std::vector<std::string> partial;
  for (const auto& e : std::filesystem::directory_iterator(p.dir.path()))
    if (e.path().filename().string().find(".nubo-part") != std::string::npos)
      partial.push_back(e.path());
  REQUIRE(partial.size() == 1);
  std::filesystem::remove(partial[0]);
  const auto s = store::download_file(*p.open(), url, p.dir / "back.bin", small_parts());
  CHECK(s.bytes_resumed == 0);
  CHECK(nubo_test::read_file(p.dir / "back.bin") == content);
}

TEST_CASE("a flipped bit in a stored object is refused, and nothing lands", "[store]") {
  Place p;
  nubo_test::write_file(p.dir / "f.bin", nubo_test::random_bytes(300000, 10));
  const auto url = p.url("f.bin");
  auto s = p.open();
  store::upload_file(*s, p.dir / "f.bin", url, small_parts());
  const auto info = s->head_object(url);
  REQUIRE(info);
  auto bytes = s->get_range(url, 0, info->size);
  bytes[123456] ^= 0x10;
  s->put_object(url, nubo::transfer::as_bytes(bytes), info->metadata);  // same checksum
  CHECK(code_of([&] { store::download_file(*s, url, p.dir / "back", small_parts()); }) ==
        Errc::corrupt);
  CHECK_FALSE(nubo::transfer::exists(p.dir / "back"));
}

TEST_CASE("a missing bucket or directory, and a malformed URL, are errors naming them", "[store]") {
  Place p;
  const auto scheme = nubo_test::store_scheme();
  const auto missing = scheme == "file"
                           ? "file://" + p.dir.path() + "/no/such/dir/"
                           : scheme + "://nubo-no-such-bucket-" + std::to_string(::getpid()) + "/";
  nubo::transfer::CopyOptions o;
  o.sync = false;
  CHECK_THROWS_WITH(nubo::transfer::copy(missing + "x.bin", p.dir / "x", o),
                    Catch::Contains(missing.substr(0, 24)));
  CHECK(code_of([&] { nubo::transfer::copy(missing + "x.bin", p.dir / "x", o); }) ==
        Errc::not_found);
  CHECK(code_of([&] { nubo::transfer::copy(missing, p.dir / "x", o); }) == Errc::not_found);
  CHECK(code_of([&] { store::parse_url(scheme + "://"); }) == Errc::invalid_argument);
  CHECK_THROWS_WITH(store::parse_url("ftp://x/y"), Catch::Contains("s3://, gs://, file://"));
  CHECK_THROWS_WITH(store::parse_url("file://host/x"), Catch::Contains("file:///PATH"));
}
