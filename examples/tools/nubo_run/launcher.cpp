#include "launcher.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "line_buffer.hpp"

extern char** environ;

namespace nubo::run {
namespace {

using Clock = std::chrono::steady_clock;

// Signals reach the event loop through a pipe: the handler only writes the signal's number.
int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  const int saved = errno;
  const unsigned char b = static_cast<unsigned char>(sig);
  ssize_t ignored = ::write(g_signal_pipe[1], &b, 1);
  (void)ignored;
  errno = saved;
}

void write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone (a closed pipe): nothing better to do
    done += static_cast<std::size_t>(n);
  }
}

void say(const std::string& message) {
  write_all(2, "nubo-run: " + message + "\n");
}

std::string signal_name(int sig) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on std::string(" (") + ...
  std::string s = std::to_string(sig);
  if (const char* abbrev = ::sigabbrev_np(sig)) s.append(" (SIG").append(abbrev).append(")");
  return s;
}

std::string how_it_ended(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + signal_name(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

bool failed(int status) {
  return !(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kExitResume));
}

bool resumable(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == kExitResume;
}

// The handlers and their pipe, once per process (a job may be launched several times).
bool install_signal_handlers() {
  static bool ok = [] {
    if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return false;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) ::sigaction(s, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  return ok;
}

struct Stream {
  int fd = -1;
  int to = 1;  // nubo-run's stdout or stderr
  LineBuffer lines;
};

struct Proc {
  int rank = 0;
  pid_t pid = -1;
  std::optional<int> status;
  Stream out, err;
};

// The environment of local process `local`: nubo-run's own, with the job's variables set:
// nubo's, torchrun's (so that a torch.distributed script runs unchanged), and the threads each
// process's OpenBLAS and OpenMP may use, unless the user set those.
std::vector<std::string> child_env(const LaunchSpec& spec, int local) {
  const int rank = spec.node_rank * spec.nproc + local;
  const std::vector<std::pair<std::string, std::string>> job = {
      {"NUBO_RANK", std::to_string(rank)},
      {"NUBO_LOCAL_RANK", std::to_string(local)},
      {"NUBO_WORLD_SIZE", std::to_string(spec.world_size)},
      {"NUBO_LOCAL_WORLD_SIZE", std::to_string(spec.nproc)},
      {"NUBO_RENDEZVOUS", spec.rendezvous},
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(local)},
      {"WORLD_SIZE", std::to_string(spec.world_size)},
      {"LOCAL_WORLD_SIZE", std::to_string(spec.nproc)},
      {"GROUP_RANK", std::to_string(spec.node_rank)},
      {"MASTER_ADDR", spec.master_addr},
      {"MASTER_PORT", std::to_string(spec.master_port)}};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string s = *e;
    const bool replaced = std::any_of(
        job.begin(), job.end(), [&](const auto& kv) { return s.rfind(kv.first + "=", 0) == 0; });
    if (!replaced) env.push_back(std::move(s));
  }
  for (const auto& [name, value] : job) env.push_back(name + "=" + value);
  for (const auto& [name, value] : spec.extra_env) env.push_back(name + "=" + value);
  return env;
}

std::string prefix_for(int rank, int world) {
  const int width = static_cast<int>(std::to_string(world - 1).size());
  const std::string r = std::to_string(rank);
  std::string p = "[";
  p.append(static_cast<std::size_t>(width) - r.size(), ' ').append(r).append("] ");
  return p;
}

// Starts one process in a process group of its own (so that signals reach it, and what it
// starts, exactly once); its stdout and stderr come back through pipes.
void spawn(const LaunchSpec& spec, int local, Proc& p) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error(std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  auto env = child_env(spec, local);
  std::vector<char*> envp, argv;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  auto command = spec.command;
  for (auto& s : command) argv.push_back(s.data());
  argv.push_back(nullptr);

  const int rc = ::posix_spawnp(&p.pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    throw std::runtime_error("cannot start " + spec.command[0] + ": " + std::strerror(rc));
  }
  // Non-blocking, so that reading whatever is there never stalls the loop.
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  p.out.fd = out[0];
  p.out.to = 1;
  p.err.fd = err[0];
  p.err.to = 2;
}

void signal_all(std::vector<Proc>& procs, int sig) {
  for (auto& p : procs) {
    if (p.pid > 0 && !p.status) ::kill(-p.pid, sig);  // its whole process group
  }
}

// Reads what is available on a stream; closes it at end of file.
void drain(Stream& s) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(s.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      write_all(s.to, s.lines.feed(std::string_view(buf, static_cast<std::size_t>(n))));
      if (static_cast<std::size_t>(n) < sizeof buf) return;
      continue;
    }
    if (n < 0 && errno == EAGAIN) return;
    write_all(s.to, s.lines.finish());
    ::close(s.fd);
    s.fd = -1;
    return;
  }
}

}  // namespace

// Not a signal number: the byte stop_attempt() writes into the signal pipe.
constexpr unsigned char kStopAttempt = 0xfe;

void deliver_signal(int sig) {
  if (install_signal_handlers()) on_signal(sig);
}

void stop_attempt() {
  if (install_signal_handlers()) on_signal(kStopAttempt);
}

int pause_for(std::chrono::milliseconds how_long) {
  if (!install_signal_handlers()) {
    ::usleep(static_cast<useconds_t>(how_long.count() * 1000));
    return 0;
  }
  const auto until = Clock::now() + how_long;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return 0;
    pollfd p{g_signal_pipe[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    unsigned char sig = 0;
    while (::read(g_signal_pipe[0], &sig, 1) == 1)
      if (sig != SIGCHLD && sig != kStopAttempt) return sig;
  }
}

Outcome launch(const LaunchSpec& spec) {
  if (!install_signal_handlers()) {
    say(std::string("cannot create a pipe: ") + std::strerror(errno));
    return {1, 0};
  }

  std::vector<Proc> procs;
  procs.reserve(static_cast<std::size_t>(spec.nproc));
  for (int local = 0; local < spec.nproc; ++local) {
    const int rank = spec.node_rank * spec.nproc + local;
    const std::string prefix = prefix_for(rank, spec.world_size);
    procs.push_back(
        Proc{rank, -1, std::nullopt, {-1, 1, LineBuffer(prefix)}, {-1, 2, LineBuffer(prefix)}});
    try {
      spawn(spec, local, procs.back());
    } catch (const std::exception& e) {
      say(std::string(e.what()) + " (rank " + std::to_string(rank) + ")");
      procs.pop_back();
      signal_all(procs, SIGKILL);
      for (auto& p : procs) ::waitpid(p.pid, nullptr, 0);
      return {127, 0};
    }
  }

  std::optional<std::size_t> first_failure;  // index into procs
  int stop_signal = 0;                       // the signal nubo-run was stopped with
  bool health_stop = false;                  // stop_attempt(): a GPU failed
  std::optional<Clock::time_point> term_at, kill_at;
  // A failure is named as the job's cause once the exits that follow it within kSettle are in:
  // of those, one a signal killed is the cause, since the others most likely exited because
  // they saw it die (the shared-memory link notices within milliseconds, sometimes before the
  // killed process can be reaped).
  constexpr auto kSettle = std::chrono::milliseconds(250);
  std::optional<std::size_t> cause;
  std::optional<Clock::time_point> settle_at;
  std::optional<Clock::time_point> output_deadline;  // after the last exit: stray writers

  for (;;) {
    bool all_done = true;
    for (auto& p : procs) all_done = all_done && p.status.has_value();
    bool streams_open = false;
    for (auto& p : procs) streams_open = streams_open || p.out.fd >= 0 || p.err.fd >= 0;
    const auto now = Clock::now();
    if (settle_at && (now >= *settle_at || all_done)) {
      const auto& p = procs[*cause];
      first_failure = cause;
      say("rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + ") " +
          how_it_ended(*p.status) + "; the other processes get " +
          std::to_string(spec.grace.count() / 1000) + " s to finish before they are stopped");
      term_at = now + spec.grace;
      settle_at.reset();
    }
    if (all_done && !streams_open) break;
    if (all_done && !output_deadline) output_deadline = now + std::chrono::seconds(2);
    if (output_deadline && now >= *output_deadline) break;  // a grandchild kept a pipe
    if (term_at && now >= *term_at) {
      say("stopping the other processes (SIGTERM)");
      signal_all(procs, SIGTERM);
      term_at.reset();
      kill_at = now + spec.grace;
    }
    if (kill_at && now >= *kill_at) {
      signal_all(procs, SIGKILL);
      kill_at.reset();
    }

    std::vector<pollfd> fds{{g_signal_pipe[0], POLLIN, 0}};
    std::vector<Stream*> streams{nullptr};
    for (auto& p : procs) {
      for (Stream* s : {&p.out, &p.err}) {
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
      }
    }
    int wait_ms = -1;
    for (auto deadline : {settle_at, term_at, kill_at, output_deadline}) {
      if (!deadline) continue;
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - now).count();
      ms = std::max<long long>(ms, 0) + 1;
      wait_ms = wait_ms < 0 ? static_cast<int>(ms) : std::min(wait_ms, static_cast<int>(ms));
    }
    if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) {
      say(std::string("poll failed: ") + std::strerror(errno));
      signal_all(procs, SIGKILL);
      return {1, stop_signal};
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents) drain(*streams[i]);
    }
    if (fds[0].revents) {
      unsigned char sigs[64];
      ssize_t n;
      while ((n = ::read(g_signal_pipe[0], sigs, sizeof sigs)) > 0) {
        for (ssize_t i = 0; i < n; ++i) {
          const int sig = sigs[i];
          if (sig == SIGCHLD) continue;  // reaped below
          if (sig == kStopAttempt) {
            if (health_stop) continue;
            health_stop = true;
            say("stopping the processes (SIGTERM)");
            signal_all(procs, SIGTERM);
            term_at.reset();
            if (!kill_at) kill_at = Clock::now() + spec.grace;
            continue;
          }
          if (stop_signal != 0 && sig == SIGINT) {
            say("second interrupt: killing every process");
            signal_all(procs, SIGKILL);
            continue;
          }
          if (stop_signal == 0) stop_signal = sig;
          say("passing signal " + signal_name(sig) + " on to the processes");
          signal_all(procs, sig);
          term_at.reset();
          if (!kill_at) kill_at = Clock::now() + spec.grace;
        }
      }
    }
    // Reap whoever ended (SIGCHLD may merge several exits into one).
    for (std::size_t i = 0; i < procs.size(); ++i) {
      auto& p = procs[i];
      if (p.status) continue;
      int st = 0;
      if (::waitpid(p.pid, &st, WNOHANG) != p.pid) continue;
      p.status = st;
      if (!failed(st) || first_failure || stop_signal != 0 || health_stop) continue;
      if (!cause || (WIFSIGNALED(st) && !WIFSIGNALED(*procs[*cause].status))) cause = i;
      if (!settle_at) settle_at = Clock::now() + kSettle;
    }
  }
  for (auto& p : procs) {
    if (p.out.fd >= 0) ::close(p.out.fd);
    if (p.err.fd >= 0) ::close(p.err.fd);
  }

  if (health_stop && !first_failure) {
    Outcome o{kExitResume, stop_signal};
    o.stopped_for_health = true;
    return o;
  }
  if (first_failure) {
    const auto& p = procs[*first_failure];
    say("the job failed: rank " + std::to_string(p.rank) + " " + how_it_ended(*p.status));
    if (WIFEXITED(*p.status)) return {WEXITSTATUS(*p.status), stop_signal};
    return {128 + WTERMSIG(*p.status), stop_signal};
  }
  const bool all_resumable = std::all_of(
      procs.begin(), procs.end(), [](const Proc& p) { return p.status && resumable(*p.status); });
  const bool any_resumable = std::any_of(
      procs.begin(), procs.end(), [](const Proc& p) { return p.status && resumable(*p.status); });
  if (stop_signal != 0) {
    // Stopped, and every process saved its state: "saved, resume me", not "killed".
    if (all_resumable) {
      say("every process saved its state and stopped (status 75): run the job again to resume");
      return {kExitResume, stop_signal};
    }
    return {128 + stop_signal, stop_signal};
  }
  for (auto& p : procs) {
    if (p.status && failed(*p.status)) return {1, 0};  // a failure after a stop; already reported
  }
  return {any_resumable ? kExitResume : 0, 0};
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 29500;  // what torchrun would use, should the kernel not say
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

}  // namespace nubo::run
