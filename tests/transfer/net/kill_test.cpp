// nubo-xfer send and serve as subprocesses, SIGKILLed at random points (seeded, a few
// iterations): the sender, then the receiver (which also cuts every connection). After each kill,
// every file under its final name must be complete and correct; the final run must leave a tree
// identical to the source and send exactly what the receiver had not verified.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "../helpers.hpp"

extern char** environ;

using nubo_test::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

pid_t spawn(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  std::vector<std::string> all = {NUBO_XFER_BIN};
  all.insert(all.end(), args.begin(), args.end());
  return nubo_test::spawn_logged(all, out, err, false);
}

// Waits for `pid` up to `limit`; SIGKILLs it then. Returns whether it exited by itself.
bool wait_or_kill(pid_t pid, std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  int status = 0;
  while (Clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return false;
}

struct ServeProcess {
  pid_t pid = -1;
  std::string port;
  ServeProcess(const TempDir& t, const std::string& dest) {
    auto out = t / "serve.out";
    pid = spawn({"serve", "--listen", "127.0.0.1:0", "--dest", dest, "--mkdir", "--token-file",
                 t / "token", "--timeout", "5"},
                out, t / "serve.log");
    for (int i = 0; i < 500 && port.empty(); ++i) {  // at most 5 s
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::ifstream f(out);
      std::getline(f, port);
    }
    REQUIRE(!port.empty());
  }
  void kill() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    pid = -1;
  }
  ~ServeProcess() { kill(); }
};

// Every file under its final name is the source's.
void check_final_files(const std::string& src, const std::string& dst) {
  for (const char* name : {"text", "random", "d/small1", "d/small2", "e/copy"}) {
    struct stat st {};
    if (::lstat((dst + "/" + name).c_str(), &st) != 0) continue;
    INFO(name);
    CHECK(nubo_test::read_file(dst + "/" + name) == nubo_test::read_file(src + "/" + name));
  }
}

}  // namespace

TEST_CASE("send and serve killed at random points resume to an identical tree", "[net][kill]") {
  TempDir t;
  auto src = t / "src";
  nubo_test::write_file(src + "/text", nubo_test::text_bytes(12 << 20, 1));
  nubo_test::write_file(src + "/random", nubo_test::random_bytes(8 << 20, 2));
  nubo_test::write_file(src + "/d/small1", "one");
  nubo_test::write_file(src + "/d/small2", nubo_test::text_bytes(70000, 3));
  nubo_test::write_file(src + "/e/copy", nubo_test::text_bytes(70000, 3));  // sent as a copy
  nubo_test::write_file(t / "token", "kill-test-token-0123456789");
  ::chmod((t / "token").c_str(), 0600);
  auto dst = t / "dst";
  std::vector<std::string> send_args = {
      "send", src + "/.", "",    "--token-file", t / "token", "--streams", "2", "--chunk-size",
      "256K", "--rate",   "12M", "--quiet",      "--json",    "--timeout", "5"};
  std::mt19937 rng(20240601);
  for (int iteration = 0; iteration < 3; ++iteration) {
    // The sender, killed.
    {
      ServeProcess serve(t, dst);
      send_args[2] = "127.0.0.1:" + serve.port;
      auto pid = spawn(send_args, t / "send.out", t / "send.log");
      wait_or_kill(pid, std::chrono::milliseconds(100 + rng() % 500));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      check_final_files(src, dst);
    }
    // The receiver, killed (its connections cut with it).
    {
      ServeProcess serve(t, dst);
      send_args[2] = "127.0.0.1:" + serve.port;
      auto pid = spawn(send_args, t / "send.out", t / "send.log");
      std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 500));
      serve.kill();
      CHECK(wait_or_kill(pid, std::chrono::milliseconds(20000)));  // it notices, and stops
      check_final_files(src, dst);
    }
  }
  ServeProcess serve(t, dst);
  send_args[2] = "127.0.0.1:" + serve.port;
  auto pid = spawn(send_args, t / "send.out", t / "send.log");
  REQUIRE(wait_or_kill(pid, std::chrono::milliseconds(60000)));
  auto j = nlohmann::json::parse(nubo_test::read_file(t / "send.out"));
  std::uint64_t bytes = j["bytes"], sent = j["bytes_sent"], skipped = j["bytes_skipped"],
                resumed = j["bytes_resumed"];
  // Sent again: exactly what the receiver had not verified (the bound is one chunk per stream).
  CHECK(sent + skipped + resumed == bytes);
  CHECK(sent <= bytes - skipped - resumed + 2 * (256 << 10));
  std::string why;
  CHECK(nubo_test::same_tree(src, dst, &why));
  INFO(why);
}
