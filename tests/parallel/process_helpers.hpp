// Helpers for the tests that run several processes: temporary folders, child processes with
// their own environment and a log of their output, bounded waits, and a redis-server of the
// test's own on a free loopback port.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nubo::test {

struct TempDir {
  std::string path;
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// A loopback TCP port nobody listens on right now.
int free_port();

// The full path of a program on PATH (or in /usr/sbin, /usr/bin); empty when absent.
std::string find_program(const std::string& name);

class Child {
 public:
  // Starts argv[0] with the environment plus `env` ("NAME=value"; "NAME=" with an empty value
  // removes NAME), stdout and stderr going to log_path.
  Child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
        std::string log_path);
  ~Child();  // kills it if still running
  Child(Child&&) noexcept;
  Child(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // The wait status once it ended, or nullopt if it still runs after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  void signal(int sig);
  std::string output() const;

 private:
  pid_t pid_ = -1;
  std::string log_;
  std::optional<int> status_;
};

// "exited with 3", "killed by signal 9": a wait status in words, for failure messages.
std::string status_text(int status);

// A redis-server of the test's own; nullptr when redis-server is not installed.
class RedisServer {
 public:
  static std::unique_ptr<RedisServer> start();
  ~RedisServer();
  std::string url(const std::string& job) const;
  int port() const { return port_; }

 private:
  RedisServer() = default;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Child> child_;
  int port_ = 0;
};

// Waits until `path` exists, up to timeout; false when it never did.
bool wait_for_file(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace nubo::test
