// Shared by the transfer tests: scratch directories, files with known content, a tree
// comparison that checks content, kind, mode, mtime and link targets, and subprocesses.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace nubo_test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/nubo-xfer-test-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void make_dirs(const std::string& path) {
  std::string at;
  std::size_t pos = 0;
  while ((pos = path.find('/', pos + 1)) != std::string::npos) {
    ::mkdir(path.substr(0, pos).c_str(), 0755);
  }
  ::mkdir(path.c_str(), 0755);
}

inline void write_file(const std::string& path, const std::string& content) {
  auto slash = path.rfind('/');
  if (slash != std::string::npos) make_dirs(path.substr(0, slash));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

// Starts `argv` (argv[0] a path) with stdout to `out` (appended or truncated) and stderr
// appended to `err`; the caller waits for or kills the process.
inline pid_t spawn_logged(std::vector<std::string> argv, const std::string& out,
                          const std::string& err, bool append_out) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(),
                                   O_WRONLY | O_CREAT | (append_out ? O_APPEND : O_TRUNC), 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

struct KilledRun {
  bool killed = false;  // SIGKILLed before it finished
  int exit_code = -1;   // when it finished
};

// Runs `argv` as spawn_logged does; SIGKILLs it after `kill_after` unless it finished first.
inline KilledRun run_killed(const std::vector<std::string>& argv,
                            std::chrono::microseconds kill_after, const std::string& out,
                            const std::string& err, bool append_out) {
  pid_t pid = spawn_logged(argv, out, err, append_out);
  auto deadline = std::chrono::steady_clock::now() + kill_after;
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  KilledRun r;
  if (WIFSIGNALED(status)) {
    r.killed = true;
  } else {
    r.exit_code = WEXITSTATUS(status);
  }
  return r;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; i += 8) {
    auto v = rng();
    for (std::size_t j = 0; j < 8 && i + j < n; ++j) s[i + j] = static_cast<char>(v >> (8 * j));
  }
  return s;
}

// Compressible, text-like bytes: words from a small vocabulary.
inline std::string text_bytes(std::size_t n, std::uint64_t seed) {
  static const char* words[] = {"tensor ", "gradient ", "checkpoint ", "cloud ",
                                "GPU ",    "chunk ",    "archive\n",   "resume ",
                                "zstd ",   "lz4 ",      "{\"k\": 1}\n"};
  std::mt19937_64 rng(seed);
  std::string s;
  s.reserve(n + 16);
  while (s.size() < n) s += words[rng() % (sizeof words / sizeof *words)];
  s.resize(n);
  return s;
}

// Every entry under `root`, relative, sorted; each line "kind mode size path [-> target]".
inline void walk(const std::string& root, const std::string& rel, std::vector<std::string>& out,
                 bool with_mtime) {
  std::string dir = rel.empty() ? root : root + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw std::runtime_error("cannot open " + dir);
  std::vector<std::string> names;
  while (auto* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string r = rel.empty() ? n : rel + "/" + n;
    std::string full = root + "/" + r;
    struct stat st {};
    ::lstat(full.c_str(), &st);
    std::string line;
    if (S_ISDIR(st.st_mode)) {
      line = "d " + std::to_string(st.st_mode & 07777) + " " + r;
      if (with_mtime)
        line += " t" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
      out.push_back(line);
      walk(root, r, out, with_mtime);
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      auto len = ::readlink(full.c_str(), buf, sizeof buf);
      line =
          "l " + r + " -> " + std::string(buf, static_cast<std::size_t>(std::max<ssize_t>(len, 0)));
    } else {
      line = "f " + std::to_string(st.st_mode & 07777) + " " + std::to_string(st.st_size) + " " + r;
      if (with_mtime)
        line += " t" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    }
    out.push_back(line);
  }
}

inline std::vector<std::string> tree(const std::string& root, bool with_mtime = true) {
  std::vector<std::string> out;
  walk(root, "", out, with_mtime);
  return out;
}

// True when two files hold the same bytes. Compared a block at a time, so multi-GB (sparse)
// files need neither gigabytes of memory nor a byte-by-byte read.
inline bool same_content(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) throw std::runtime_error("cannot read " + (fa ? b : a));
  std::vector<char> ba(1 << 20), bb(1 << 20);
  for (;;) {
    fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (fa.gcount() != fb.gcount()) return false;
    if (!std::equal(ba.begin(), ba.begin() + fa.gcount(), bb.begin())) return false;
    if (fa.gcount() == 0 || !fa) return fa.eof() && fb.eof();
  }
}

// True when both trees have the same entries, metadata and file contents.
inline bool same_tree(const std::string& a, const std::string& b, std::string* why = nullptr) {
  auto ta = tree(a), tb = tree(b);
  if (ta != tb) {
    if (why) {
      *why = "entries differ:";
      for (std::size_t i = 0; i < std::max(ta.size(), tb.size()); ++i) {
        auto x = i < ta.size() ? ta[i] : "<none>";
        auto y = i < tb.size() ? tb[i] : "<none>";
        if (x != y) {
          *why += "\n  " + x + "\n  " + y;
          break;
        }
      }
    }
    return false;
  }
  for (const auto& line : ta) {
    if (line[0] != 'f') continue;
    auto rel = line.substr(line.find(' ', line.find(' ', 2) + 1) + 1);
    rel = rel.substr(0, rel.rfind(" t"));
    if (!same_content(a + "/" + rel, b + "/" + rel)) {
      if (why) *why = "content of " + rel + " differs";
      return false;
    }
  }
  return true;
}

// The first file under its final name in `out` (temporary ".nubo-" names aside) that differs
// from the same path under `src_parent`; empty when none does. After a kill, whatever has its
// final name must be complete and correct.
inline std::string first_wrong_file(const std::string& out, const std::string& src_parent) {
  for (const auto& line : tree(out, false)) {
    if (line[0] != 'f' || line.find(".nubo-") != std::string::npos) continue;
    auto rel = line.substr(line.find(' ', line.find(' ', 2) + 1) + 1);
    if (read_file(out + "/" + rel) != read_file(src_parent + "/" + rel)) return rel;
  }
  return {};
}

}  // namespace nubo_test
