// The one way nubo reads a whole file it was pointed at: refused when it is not a regular file
// (a FIFO must not hang the reader in open), bounded whatever its size says, named in errors.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "common/small_file.hpp"
#include "nubo/error.hpp"

using nubo::files::read_small_file;
using nubo::files::read_small_file_if_present;

namespace {

struct Dir {
  std::string path;
  Dir() {
    char name[] = "/tmp/nubo-small-file-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~Dir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

nubo::Errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const nubo::Error& e) {
    return e.code();
  }
  return nubo::Errc::ok;
}

}  // namespace

TEST_CASE("a small regular file is read whole, with its mode") {
  Dir dir;
  std::ofstream(dir / "a") << "key = value\n";
  ::chmod((dir / "a").c_str(), 0640);
  const auto f = read_small_file(dir / "a", 100, "config file");
  CHECK(f.bytes == "key = value\n");
  CHECK(f.mode == 0640);
  std::ofstream(dir / "empty");
  CHECK(read_small_file(dir / "empty", 0, "config file").bytes.empty());
}

TEST_CASE("a missing file is nullopt, or not_found naming it") {
  Dir dir;
  CHECK_FALSE(read_small_file_if_present(dir / "none", 100, "token file").has_value());
  CHECK(code_of([&] { read_small_file(dir / "none", 100, "token file"); }) ==
        nubo::Errc::not_found);
  CHECK_THROWS_WITH(read_small_file(dir / "none", 100, "token file"),
                    Catch::Contains("token file '" + (dir / "none") + "' does not exist"));
}

TEST_CASE("a file over its limit is refused, before or while it is read") {
  Dir dir;
  std::ofstream(dir / "big") << std::string(101, 'x');
  CHECK_THROWS_WITH(read_small_file(dir / "big", 100, "catalog file"),
                    Catch::Contains("holds more than 100 B, more than a catalog file may have"));
  std::ofstream(dir / "fits") << std::string(100, 'x');
  CHECK(read_small_file(dir / "fits", 100, "catalog file").bytes.size() == 100);
  // /proc files say they hold 0 bytes: the limit holds while reading, not only from the size.
  CHECK(read_small_file("/proc/self/status", 1 << 20, "status").bytes.size() > 0);
  CHECK_THROWS_WITH(read_small_file("/proc/self/status", 16, "status"),
                    Catch::Contains("more than a status may have"));
}

TEST_CASE("devices, FIFOs and directories are refused at once") {
  Dir dir;
  CHECK_THROWS_WITH(read_small_file("/dev/zero", 1 << 20, "AWS config file"),
                    Catch::Contains("AWS config file '/dev/zero' is a character device"));
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  // No writer ever opens it: a blocking open would wait here for ever.
  CHECK_THROWS_WITH(read_small_file(dir / "fifo", 100, "token file"), Catch::Contains("a FIFO"));
  CHECK_THROWS_WITH(read_small_file(dir.path, 100, "profile"),
                    Catch::Contains("is a directory, not a regular file"));
  CHECK(code_of([&] { read_small_file(dir.path, 100, "profile"); }) ==
        nubo::Errc::invalid_argument);
}
