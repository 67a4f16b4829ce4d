#include "process_helpers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

namespace nubo::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/nubo-test-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

int free_port() {
  // A port the kernel never hands out by itself: below its ephemeral range, which every
  // outgoing connection and bind(0) of the tests running beside this one draws from. A port
  // taken from that range here could be taken again before the program under test binds it.
  int low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> low;
  std::random_device seed;
  std::mt19937 gen(seed());
  std::uniform_int_distribution<int> pick(10000, std::max(10001, low - 1));
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = pick(gen);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (free) return port;
  }
  throw std::runtime_error("no free port below the ephemeral range");
}

std::string find_program(const std::string& name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/usr/bin:/usr/local/bin";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

Child::Child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
             std::string log_path)
    : log_(std::move(log_path)) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string s(*e);
    auto eq = s.find('=');
    if (eq != std::string::npos) vars[s.substr(0, eq)] = s.substr(eq + 1);
  }
  for (const auto& s : env) {
    auto eq = s.find('=');
    if (eq == std::string::npos) continue;
    if (eq + 1 == s.size()) {
      vars.erase(s.substr(0, eq));
    } else {
      vars[s.substr(0, eq)] = s.substr(eq + 1);
    }
  }
  std::vector<std::string> env_strings;
  for (auto& [k, v] : vars) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
}

Child::Child(Child&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), log_(std::move(o.log_)), status_(o.status_) {}

Child::~Child() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

std::optional<int> Child::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = st;
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void Child::signal(int sig) {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

std::string Child::output() const {
  std::ifstream f(log_);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string status_text(int status) {
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

std::unique_ptr<RedisServer> RedisServer::start() {
  const std::string exe = find_program("redis-server");
  if (exe.empty()) return nullptr;
  std::unique_ptr<RedisServer> s(new RedisServer);
  s->dir_ = std::make_unique<TempDir>();
  // A free port can be taken between the check and the bind: try a few.
  for (int attempt = 0; attempt < 5; ++attempt) {
    s->port_ = free_port();
    s->child_ = std::make_unique<Child>(
        std::vector<std::string>{exe, "--port", std::to_string(s->port_), "--bind", "127.0.0.1",
                                 "--save", "", "--appendonly", "no", "--dir", s->dir_->path},
        std::vector<std::string>{}, s->dir_->path + "/redis.log");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (s->child_->wait(std::chrono::milliseconds(0))) break;  // it exited: port taken?
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<std::uint16_t>(s->port_));
      const bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      ::close(fd);
      if (up) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  throw std::runtime_error("redis-server did not start: " + s->child_->output());
}

RedisServer::~RedisServer() {
  if (child_) {
    child_->signal(SIGTERM);
    if (!child_->wait(std::chrono::seconds(5))) child_->signal(SIGKILL);
  }
}

std::string RedisServer::url(const std::string& job) const {
  return "redis://127.0.0.1:" + std::to_string(port_) + "/" + job;
}

bool wait_for_file(const std::string& path, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::access(path.c_str(), F_OK) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ::access(path.c_str(), F_OK) == 0;
}

}  // namespace nubo::test
