// Damage anywhere in an archive is detected and named, and unpack never renames a wrong file
// into place.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"

namespace xfer = nubo::transfer;
using nubo_test::TempDir;

namespace {

struct Fixture {
  TempDir dir;
  std::string archive = dir / "a.nubo";
  std::string bytes;
  Fixture() {
    nubo_test::write_file(dir / "src/text.txt", nubo_test::text_bytes(40000, 31));
    nubo_test::write_file(dir / "src/random.bin", nubo_test::random_bytes(9000, 32));
    nubo_test::write_file(dir / "src/zeros", std::string(8192, '\0'));
    nubo_test::write_file(dir / "src/sub/small", "small file");
    xfer::pack({dir / "src"}, archive,
               {.codec = xfer::Codec::zstd, .chunk_size = 4096, .threads = 1, .sync = false});
    bytes = nubo_test::read_file(archive);
  }
  // Every file that exists under its final name in `out` equals the source.
  void check_no_wrong_file(const std::string& out) const {
    for (const auto& line : nubo_test::tree(out, false)) {
      if (line[0] != 'f' || line.find(".nubo-") != std::string::npos) continue;
      auto rel = line.substr(line.find(' ', line.find(' ', 2) + 1) + 1);
      INFO(rel);
      CHECK(nubo_test::read_file(out + "/" + rel) == nubo_test::read_file(dir / rel));
    }
  }
};

// The message says where: a file and chunk, or which structure.
bool names_the_place(const std::string& m) {
  for (const char* w : {"file '", "entry '", "header", "trailer", "index", "record"}) {
    if (m.find(w) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a flipped bit anywhere is detected by verify, and named") {
  Fixture f;
  auto damaged = f.dir / "d.nubo";
  std::size_t checked = 0;
  for (std::size_t i = 0; i < f.bytes.size(); i += (i < 600 || i + 700 > f.bytes.size()) ? 1 : 13) {
    auto b = f.bytes;
    b[i] = static_cast<char>(b[i] ^ (1 << (i % 8)));
    nubo_test::write_file(damaged, b);
    INFO("byte " << i << " of " << f.bytes.size());
    try {
      xfer::verify(damaged, {.threads = 1});
      FAIL("not detected");
    } catch (const nubo::Error& e) {
      CHECK((e.code() == nubo::Errc::corrupt || e.code() == nubo::Errc::unsupported));
      CHECK(names_the_place(e.what()));
    }
    ++checked;
  }
  CHECK(checked > 1000);
}

TEST_CASE("a damaged chunk is reported with its file and chunk number") {
  Fixture f;
  auto entries = xfer::list(f.archive);
  // The text file's data: after its entry record; flip a byte well inside it.
  auto pos = f.bytes.find("NREC", 64 + 48 + 1);  // a record after the first
  REQUIRE(pos != std::string::npos);
  auto b = f.bytes;
  // Damage the middle of the whole archive's data: some chunk of some file.
  b[b.size() / 3] ^= 0x20;
  nubo_test::write_file(f.dir / "d.nubo", b);
  CHECK_THROWS_WITH(xfer::verify(f.dir / "d.nubo"),
                    Catch::Contains("file '") && Catch::Contains("chunk"));
}

TEST_CASE("a truncated archive is detected and the message says where it ends") {
  Fixture f;
  auto cut = f.dir / "t.nubo";
  for (std::size_t n = 0; n < f.bytes.size(); n += (n + 300 > f.bytes.size()) ? 1 : 41) {
    nubo_test::write_file(cut, f.bytes.substr(0, n));
    INFO("length " << n);
    CHECK_THROWS_AS(xfer::verify(cut), nubo::Error);
    CHECK_THROWS_AS(xfer::list(cut), nubo::Error);
  }
  nubo_test::write_file(cut, f.bytes.substr(0, f.bytes.size() / 2));
  CHECK_THROWS_WITH(xfer::list(cut), Catch::Contains("the records are whole up to offset") &&
                                         Catch::Contains("'src/"));
}

TEST_CASE("unpack of a damaged archive fails and leaves no wrong file in place") {
  Fixture f;
  auto damaged = f.dir / "d.nubo";
  int failures = 0;
  for (std::size_t i = 64; i < f.bytes.size(); i += 211) {
    auto b = f.bytes;
    b[i] ^= 0x01;
    nubo_test::write_file(damaged, b);
    auto out = f.dir / ("out" + std::to_string(i));
    INFO("byte " << i);
    try {
      xfer::unpack(damaged, out, {.threads = 2, .sync = false});
      FAIL("unpack accepted a damaged archive");
    } catch (const nubo::Error& e) {
      ++failures;
      INFO(e.what());
      CHECK(e.code() == nubo::Errc::corrupt);
    }
    if (::access(out.c_str(), F_OK) == 0) f.check_no_wrong_file(out);
  }
  CHECK(failures > 10);
}
