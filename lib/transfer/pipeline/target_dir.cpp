#include "transfer/pipeline/target_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/hash.hpp"
#include "transfer/paths.hpp"

namespace nubo::transfer {

namespace {
int open_dir_at(int dirfd, const std::string& name) {
  return ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

// utimensat's pair: the access time left alone, the modification time set.
struct Times {
  timespec t[2];
};
Times mtime_only(std::int64_t mtime_ns) {
  Times times;
  times.t[0].tv_sec = 0;
  times.t[0].tv_nsec = UTIME_OMIT;
  times.t[1].tv_sec = static_cast<time_t>(mtime_ns / 1000000000);
  times.t[1].tv_nsec = static_cast<long>(mtime_ns % 1000000000);
  if (times.t[1].tv_nsec < 0) {
    times.t[1].tv_nsec += 1000000000;
    times.t[1].tv_sec -= 1;
  }
  return times;
}
}  // namespace

bool is_temp_name(std::string_view leaf) {
  return leaf.starts_with(".nubo-part-") || (leaf.starts_with(".") && leaf.ends_with(".nubo-part"));
}

void TargetDir::place(Fd& file, std::string_view path, std::string_view tmp, std::int64_t mtime_ns,
                      std::uint32_t mode, bool sync) {
  set_mode(file, mode);
  if (sync) file.datasync();
  file.close();
  rename(path, tmp);
  set_times_and_mode(path, mtime_ns, mode, false);
}

std::string temp_name(std::string_view leaf) {
  std::string name = ".";
  name += leaf;
  name += ".nubo-part";
  if (name.size() <= 255) return name;
  return ".nubo-part-" + hex64(hash64(as_bytes(leaf)));
}

TargetDir::TargetDir(const std::string& root, bool keep_special_modes, unsigned new_dir_mode)
    : root_(root), keep_special_(keep_special_modes), new_dir_mode_(new_dir_mode) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  // mkdir -p: each missing level of the root itself (the root is the caller's, links allowed).
  std::string at;
  for (auto part : text::split(root_, '/')) {
    at += std::string(part);
    if (!at.empty() && ::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST) {
      throw_io("create directory", at, errno);
    }
    at += '/';
  }
  int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_io("open directory", root_, errno);
  root_fd_ = Fd(fd, root_);
}

int TargetDir::parent(std::string_view path, bool create) {
  auto dir = paths::parent(path);
  if (dir.empty()) return root_fd_.get();
  if (!opened_.empty() && dir == opened_path_) return opened_.back().fd.get();
  opened_path_.clear();
  auto parts = text::split(dir, '/');
  // Keep the directories shared with the last parent, open the rest from the deepest of them.
  std::size_t kept = 0;
  while (kept < opened_.size() && kept < parts.size() && opened_[kept].name == parts[kept]) ++kept;
  opened_.resize(kept);
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    walked = paths::join(walked, parts[i]);
    if (i < kept) continue;
    std::string name(parts[i]);
    int at = i == 0 ? root_fd_.get() : opened_[i - 1].fd.get();
    int fd = open_dir_at(at, name);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(at, name.c_str(), static_cast<mode_t>(new_dir_mode_)) != 0 && errno != EEXIST) {
        throw_io("create directory", full(walked), errno);
      }
      fd = open_dir_at(at, name);
    }
    if (fd < 0) {
      if (errno == ELOOP || errno == ENOTDIR) {
        throw Error(Errc::io, full(walked) +
                                  " is not a directory (a file or a symlink is in "
                                  "the way): refusing to write through it");
      }
      throw_io("open directory", full(walked), errno);
    }
    opened_.push_back({std::move(name), Fd(fd, full(walked))});
  }
  opened_path_ = std::string(dir);
  return opened_.back().fd.get();
}

void TargetDir::make_dir(std::string_view path) {
  int at = parent(path, true);
  std::string name(paths::leaf(path));
  if (::mkdirat(at, name.c_str(), 0700) != 0 && errno != EEXIST) {
    throw_io("create directory", full(path), errno);
  }
  struct stat st {};
  if (::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
    throw Error(Errc::io, full(path) + " exists and is not a directory");
  }
}

std::optional<struct stat> TargetDir::stat(std::string_view path) {
  int at;
  try {
    at = parent(path, false);
  } catch (const Error&) {
    return std::nullopt;
  }
  struct stat st {};
  std::string name(paths::leaf(path));
  if (::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st;
}

Fd TargetDir::open_file(std::string_view path, std::string_view name, Open how) {
  bool create = how != Open::existing;
  int at = parent(path, create);
  std::string n(name);
  int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0) |
              (how == Open::replace ? O_TRUNC : 0);
  int fd = ::openat(at, n.c_str(), flags, 0600);
  auto shown = full(paths::join(paths::parent(path), name));
  if (fd < 0) throw_io(create ? "create" : "open", shown, errno);
  return Fd(fd, shown);
}

Fd TargetDir::open_read(std::string_view path) {
  int at = parent(path, false);
  std::string name(paths::leaf(path));
  int fd = ::openat(at, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw_io("open", full(path), errno);
  return Fd(fd, full(path));
}

void TargetDir::rename(std::string_view path, std::string_view from_name) {
  int at = parent(path, false);
  std::string from(from_name), to(paths::leaf(path));
  if (::renameat(at, from.c_str(), at, to.c_str()) != 0) {
    throw_io("rename into place", full(path), errno);
  }
}

void TargetDir::remove(std::string_view path, std::string_view name) {
  int at;
  try {
    at = parent(path, false);
  } catch (const Error&) {
    return;
  }
  std::string n(name);
  if (::unlinkat(at, n.c_str(), 0) != 0 && errno != ENOENT) {
    throw_io("remove", full(paths::join(paths::parent(path), name)), errno);
  }
}

void make_symlink_at(int dir_fd, const std::string& name, const std::string& target,
                     const std::string& shown) {
  if (::symlinkat(target.c_str(), dir_fd, name.c_str()) == 0) return;
  if (errno != EEXIST) throw_io("create symlink", shown, errno);
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    throw Error(Errc::io, shown + " is a directory: cannot replace it with a symlink");
  }
  auto tmp = temp_name(name);
  ::unlinkat(dir_fd, tmp.c_str(), 0);
  if (::symlinkat(target.c_str(), dir_fd, tmp.c_str()) != 0)
    throw_io("create symlink", shown, errno);
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) throw_io("replace", shown, errno);
}

void TargetDir::symlink(std::string_view path, const std::string& target) {
  make_symlink_at(parent(path, true), std::string(paths::leaf(path)), target, full(path));
}

void TargetDir::set_times_and_mode(std::string_view path, std::int64_t mtime_ns, std::uint32_t mode,
                                   bool is_link) {
  int at = parent(path, false);
  std::string name(paths::leaf(path));
  if (!is_link && ::fchmodat(at, name.c_str(), static_cast<mode_t>(mode_for(mode)), 0) != 0) {
    throw_io("set the mode of", full(path), errno);
  }
  auto times = mtime_only(mtime_ns);
  if (::utimensat(at, name.c_str(), times.t, AT_SYMLINK_NOFOLLOW) != 0) {
    throw_io("set the time of", full(path), errno);
  }
}

void TargetDir::set_mode(const Fd& file, std::uint32_t mode) const {
  if (::fchmod(file.get(), static_cast<mode_t>(mode_for(mode))) != 0)
    throw_io("set the mode of", file.name(), errno);
}

void TargetDir::set_times_and_mode(const Fd& file, std::int64_t mtime_ns,
                                   std::uint32_t mode) const {
  set_mode(file, mode);
  auto times = mtime_only(mtime_ns);
  if (::futimens(file.get(), times.t) != 0) throw_io("set the time of", file.name(), errno);
}

}  // namespace nubo::transfer
