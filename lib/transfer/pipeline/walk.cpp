#include "transfer/pipeline/walk.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "common/log.hpp"
#include "nubo/copy.hpp"
#include "nubo/error.hpp"
#include "transfer/file_io.hpp"
#include "transfer/paths.hpp"

namespace nubo::transfer {
namespace {

using format::EntryMeta;

std::string read_link(const std::string& path) {
  std::string target(256, '\0');
  for (;;) {
    auto n = ::readlink(path.c_str(), target.data(), target.size());
    if (n < 0) throw_io("readlink", path, errno);
    if (static_cast<std::size_t>(n) < target.size()) {
      target.resize(static_cast<std::size_t>(n));
      return target;
    }
    if (target.size() > format::kMaxPathLength) {
      throw Error(Errc::unsupported, path + ": link target longer than 4096 bytes");
    }
    target.resize(target.size() * 2);
  }
}

struct FileId {
  dev_t dev;
  ino_t ino;
  auto operator<=>(const FileId&) const = default;
};

// The entry of what `st` describes, under `archive_path`: a file, a directory, or (lstat's) a
// link; nullopt, with a warning, for sockets, FIFOs and devices, which are not packed.
std::optional<EntryMeta> entry_of_stat(const std::string& source_path,
                                       const std::string& archive_path, const struct stat& st) {
  EntryMeta m;
  m.path = archive_path;
  m.mode = static_cast<std::uint32_t>(st.st_mode & 07777);
  m.mtime_ns = mtime_ns(st);
  if (S_ISREG(st.st_mode)) {
    m.kind = format::EntryKind::file;
    m.size = static_cast<std::uint64_t>(st.st_size);
  } else if (S_ISDIR(st.st_mode)) {
    m.kind = format::EntryKind::directory;
  } else if (S_ISLNK(st.st_mode)) {
    m.kind = format::EntryKind::symlink;
    m.link_target = read_link(source_path);
  } else {
    log::warn(source_path + " is (or leads to) a socket, FIFO or device: skipped");
    return std::nullopt;
  }
  return m;
}

std::string real_path(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  if (!r) return {};
  std::string out(r);
  std::free(r);
  return out;
}

class Walker {
 public:
  Walker(const std::vector<std::string>& skip, const PathFilter& filter, const LinkRules* links)
      : filter_(filter), links_(links) {
    // Skipped files are recognised by their directory's identity and their name, so that they
    // are skipped whichever way the source path reaches them.
    for (const auto& s : skip) {
      auto slash = s.rfind('/');
      std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : s.substr(0, slash);
      struct stat st {};
      if (::stat(dir.c_str(), &st) == 0) {
        skip_[{st.st_dev, st.st_ino}].insert(slash == std::string::npos ? s : s.substr(slash + 1));
      }
    }
  }

  void add(const std::string& source_path, const std::string& archive_path, bool contents_only) {
    // A copy's root is what the user named: followed if it is a link, and the tree links are
    // judged against.
    if (links_) root_ = real_path(source_path);
    if (contents_only) {
      add_children(source_path, "");
      return;
    }
    auto meta = stat_entry(source_path, archive_path);
    if (meta && links_ && meta->kind == format::EntryKind::symlink) {
      struct stat st {};
      if (::stat(source_path.c_str(), &st) != 0) throw_io("follow the link", source_path, errno);
      meta = entry_of_stat(source_path, archive_path, st);
    }
    if (!meta || left_out(*meta)) return;
    push(source_path, *meta);
    if (meta->kind == format::EntryKind::directory) add_children(source_path, archive_path);
  }

  WalkResult result;

 private:
  void push(const std::string& source_path, const EntryMeta& meta) {
    auto [it, fresh] = origin_.emplace(meta.path, source_path);
    if (!fresh) {
      throw Error(Errc::invalid_argument, "two sources give the same archive path '" + meta.path +
                                              "': " + it->second + " and " + source_path);
    }
    if (meta.kind == format::EntryKind::file) result.bytes += meta.size;
    result.entries.push_back({source_path, meta});
  }

  void add_children(const std::string& dir, const std::string& archive_dir) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) throw_io("open directory", dir, errno);
    struct stat dst {};
    ::fstat(::dirfd(d), &dst);
    const std::set<std::string>* skip = nullptr;
    if (auto it = skip_.find({dst.st_dev, dst.st_ino}); it != skip_.end()) skip = &it->second;
    std::vector<std::string> names;
    errno = 0;
    while (auto* ent = ::readdir(d)) {
      std::string name = ent->d_name;
      if (name == "." || name == "..") continue;
      if (skip && skip->count(name)) continue;
      names.push_back(std::move(name));
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) throw_io("read directory", dir, err);
    std::sort(names.begin(), names.end());
    // The folders being walked, this one included: a link back to one of them is a loop.
    walking_.push_back({dst.st_dev, dst.st_ino});
    for (const auto& name : names) {
      auto child = dir == "/" ? "/" + name : dir + "/" + name;
      auto meta = stat_entry(child, paths::join(archive_dir, name));
      if (meta && links_ && meta->kind == format::EntryKind::symlink)
        meta = through_link(child, *meta);
      if (!meta || left_out(*meta)) continue;
      push(child, *meta);
      if (meta->kind == format::EntryKind::directory) add_children(child, meta->path);
    }
    walking_.pop_back();
  }

  // A link below a copy's root, by the rules: what to take in its place, or nothing.
  std::optional<EntryMeta> through_link(const std::string& child, const EntryMeta& link) {
    auto& counts = *links_->counts;
    const auto skipped = [&](const std::string& why) -> std::optional<EntryMeta> {
      log::warn(child + " -> " + printable(link.link_target) + ": " + why + "; skipped");
      ++counts.skipped;
      return std::nullopt;
    };
    if (links_->mode == Symlinks::skip) {
      ++counts.skipped;
      return std::nullopt;
    }
    if (links_->mode == Symlinks::store) {
      ++counts.stored;
      return link;
    }
    struct stat st {};
    if (::stat(child.c_str(), &st) != 0) return skipped("it leads nowhere (a dangling link)");
    const auto real = real_path(child);
    if (!links_->follow_outside && !root_.empty() && real != root_ &&
        !real.starts_with(root_ == "/" ? root_ : root_ + "/"))
      return skipped("it leads outside the tree (follow such links with --follow-outside)");
    if (S_ISDIR(st.st_mode) &&
        std::find(walking_.begin(), walking_.end(), FileId{st.st_dev, st.st_ino}) != walking_.end())
      return skipped("it leads back to a folder it is in (a loop)");
    auto meta = entry_of_stat(child, link.path, st);
    if (!meta) {
      ++counts.skipped;
      return std::nullopt;
    }
    ++counts.followed;
    return meta;
  }

  bool left_out(const EntryMeta& meta) const {
    return !filter_.empty() &&
           filter_.excluded(meta.path, meta.kind == format::EntryKind::directory);
  }

  const PathFilter& filter_;
  const LinkRules* links_;
  std::string root_;             // a copy's root, its links resolved
  std::vector<FileId> walking_;  // the folders being walked, outermost first
  std::map<FileId, std::set<std::string>> skip_;
  std::map<std::string, std::string> origin_;  // archive path -> source, for duplicates
};

}  // namespace

std::optional<EntryMeta> stat_entry(const std::string& source_path,
                                    const std::string& archive_path) {
  struct stat st {};
  if (::lstat(source_path.c_str(), &st) != 0) throw_io("stat", source_path, errno);
  if (archive_path.size() > format::kMaxPathLength) {
    throw Error(Errc::unsupported, source_path + ": path in the archive longer than 4096 bytes");
  }
  return entry_of_stat(source_path, archive_path, st);
}

WalkResult walk_sources(const std::vector<std::string>& sources,
                        const std::vector<std::string>& skip, const PathFilter& filter,
                        const LinkRules* links) {
  if (sources.empty()) throw Error(Errc::invalid_argument, "no source to pack");
  Walker walker(skip, filter, links);
  for (const auto& source : sources) {
    if (source.empty()) throw Error(Errc::invalid_argument, "an empty source path");
    // The name in the archive is the source's last component: "data/" and "/x/data" give
    // "data"; "." and "dir/." give the directory's contents without a prefix.
    std::string s = source;
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    auto slash = s.rfind('/');
    std::string name = slash == std::string::npos ? s : s.substr(slash + 1);
    if (name == "." || s == "/") {
      walker.add(s, "", true);
      continue;
    }
    if (name == "..") {
      const auto r = real_path(s);
      if (r.empty()) throw_io("resolve", s, errno);
      name = r == "/" ? "" : r.substr(r.rfind('/') + 1);
      if (name.empty()) {
        walker.add(s, "", true);
        continue;
      }
    }
    walker.add(s, name, false);
  }
  return std::move(walker.result);
}

}  // namespace nubo::transfer
