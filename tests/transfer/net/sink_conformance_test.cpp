// The same conformance suite against every sink (transfer/pipeline/sink.hpp): the archive (pack,
// then unpack to compare) and a receiver over the network (send to serve). Each must carry an
// awkward tree exactly, resume a transfer cancelled half way with what it had verified, and
// carry hostile but legal names. SIGKILL at random points is each sink's kill test
// (tests/transfer/kill_test.cpp, tests/transfer/net/kill_test.cpp).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>

#include "net_helpers.hpp"
#include "nubo/transfer.hpp"

namespace net = nubo::net;
namespace xfer = nubo::transfer;
using nubo_test::TempDir;

namespace {

// One sink as the tests drive it: transfer `src` (cancelling once `cancel_after` bytes are done,
// when not 0) and show the result as a directory.
class SinkCase {
 public:
  virtual ~SinkCase() = default;
  virtual std::string name() const = 0;
  // Bytes an earlier, interrupted attempt spared this one.
  virtual std::uint64_t transfer(const std::string& src, std::uint64_t cancel_after) = 0;
  virtual std::string result() = 0;  // the directory holding what arrived
};

class ArchiveCase : public SinkCase {
 public:
  explicit ArchiveCase(const TempDir& t) : t_(t) {}
  std::string name() const override { return "archive"; }
  std::uint64_t transfer(const std::string& src, std::uint64_t cancel_after) override {
    xfer::PackOptions o;
    o.chunk_size = 64 << 10;
    o.sync = false;
    o.threads = 2;
    if (cancel_after > 0) {
      o.level = 19;  // slow enough to be cancelled half way
      o.progress = [=](const xfer::Progress& p) { return p.bytes_done < cancel_after; };
    }
    return xfer::pack({src}, t_ / "a.nubo", o).bytes_skipped;
  }
  std::string result() override {
    xfer::unpack(t_ / "a.nubo", t_ / "unpacked", {.sync = false});
    return t_ / "unpacked";
  }

 private:
  const TempDir& t_;
};

class NetCase : public SinkCase {
 public:
  explicit NetCase(const TempDir& t)
      : t_(t), server_(std::make_unique<net::Server>(nubo_test::serve_options(t / "received"))) {}
  std::string name() const override { return "network"; }
  std::uint64_t transfer(const std::string& src, std::uint64_t cancel_after) override {
    auto o = nubo_test::send_options(2);
    o.chunk_size = 64 << 10;
    if (cancel_after > 0) {
      o.rate = 4 << 20;  // slow enough to be cancelled half way
      o.progress = [=](const net::SendProgress& p) { return p.bytes_done < cancel_after; };
    }
    auto s = net::send({src}, nubo_test::dest_of(*server_), o);
    return s.bytes_skipped + s.bytes_resumed;
  }
  std::string result() override { return t_ / "received"; }

 private:
  const TempDir& t_;
  std::unique_ptr<net::Server> server_;
};

std::unique_ptr<SinkCase> make_case(int which, const TempDir& t) {
  if (which == 0) return std::make_unique<ArchiveCase>(t);
  return std::make_unique<NetCase>(t);
}

void make_awkward_tree(const std::string& root) {
  using namespace nubo_test;
  write_file(root + "/empty", "");
  write_file(root + "/random.bin", random_bytes(700 << 10, 1));
  write_file(root + "/text.txt", text_bytes(900 << 10, 2));
  write_file(root + "/zeros", std::string(300 << 10, '\0'));
  write_file(root + "/deep/er/and/deeper/leaf", text_bytes(3000, 3));
  for (int i = 0; i < 150; ++i)
    write_file(root + "/many/f" + std::to_string(i),
               text_bytes(static_cast<std::size_t>(i * 53), 4 + static_cast<std::uint64_t>(i)));
  make_dirs(root + "/empty dir");
  REQUIRE(::symlink("text.txt", (root + "/link").c_str()) == 0);
  REQUIRE(::chmod((root + "/random.bin").c_str(), 0600) == 0);
}

}  // namespace

TEST_CASE("every sink carries an awkward tree exactly", "[net][sink]") {
  for (int which : {0, 1}) {
    TempDir t;
    make_awkward_tree(t / "src");
    auto c = make_case(which, t);
    INFO(c->name());
    CHECK(c->transfer(t / "src", 0) == 0);
    std::string why;
    CHECK(nubo_test::same_tree(t / "src", c->result() + "/src", &why));
    INFO(why);
  }
}

TEST_CASE("every sink resumes a cancelled transfer with what it verified", "[net][sink]") {
  for (int which : {0, 1}) {
    TempDir t;
    make_awkward_tree(t / "src");
    nubo_test::write_file(t / "src/big", nubo_test::random_bytes(3 << 20, 9));
    auto c = make_case(which, t);
    INFO(c->name());
    try {
      c->transfer(t / "src", 2 << 20);
      FAIL("the transfer was not cancelled");
    } catch (const nubo::Error& e) {
      CHECK(e.code() == nubo::Errc::cancelled);
    }
    CHECK(c->transfer(t / "src", 0) > 0);  // the second attempt did not start over
    CHECK(nubo_test::same_tree(t / "src", c->result() + "/src"));
  }
}

TEST_CASE("every sink carries hostile but legal names", "[net][sink]") {
  for (int which : {0, 1}) {
    TempDir t;
    for (const std::string& name :
         std::vector<std::string>{"with space", "new\nline", "tab\there", "ünïcödé 日本", "-dash",
                                  "..dots", "quote'\"", "back\\slash", std::string(200, 'n')})
      nubo_test::write_file(t / ("src/" + name), name);
    auto c = make_case(which, t);
    INFO(c->name());
    c->transfer(t / "src", 0);
    CHECK(nubo_test::same_tree(t / "src", c->result() + "/src"));
  }
}
