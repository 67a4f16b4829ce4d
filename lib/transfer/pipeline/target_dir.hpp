// The directory unpack writes into, reached only through openat() from its root with
// O_NOFOLLOW at every step: nothing is ever written through a symlink, whether it came from the
// archive or was already there, so no entry can land outside the root. Not thread-safe: it
// keeps the directories it opened last; each thread uses its own.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transfer/file_io.hpp"

namespace nubo::transfer {

class TargetDir {
 public:
  // Creates `root` (and its parents) when missing. Modes set through it lose their setuid,
  // setgid and sticky bits unless `keep_special_modes`: a file from another machine is not
  // trusted to run with its owner's rights.
  // `new_dir_mode`: the mode folders made on the way get (umask applied): unpack's are private
  // until it sets the archive's modes; a download's are as any new folder (0777).
  explicit TargetDir(const std::string& root, bool keep_special_modes = false,
                     unsigned new_dir_mode = 0700);

  // The mode a file of `mode` gets here.
  std::uint32_t mode_for(std::uint32_t mode) const {
    return mode & (keep_special_ ? 07777u : 0777u);
  }

  const std::string& root() const { return root_; }
  std::string full(std::string_view path) const { return root_ + "/" + std::string(path); }

  // The directory holding `path` ("a/b/c" -> "a/b"), creating missing ones when `create`
  // (mode 0700 until set_mode). Throws Error(io) naming the path if a component is not a
  // directory, a symlink included.
  int parent(std::string_view path, bool create);

  void make_dir(std::string_view path);
  // lstat of `path` (relative to the root, no link followed); nullopt if it does not exist.
  std::optional<struct stat> stat(std::string_view path);
  enum class Open {
    existing,  // the file must exist; its content is kept
    create,    // created (0600) when missing; an existing file's content is kept
    replace,   // created when missing, emptied when not
  };
  // Opens `name` in the directory of `path` for reading and writing.
  Fd open_file(std::string_view path, std::string_view name, Open how);
  Fd open_read(std::string_view path);  // the file at `path`, no link followed
  void rename(std::string_view path, std::string_view from_name);  // from_name -> leaf(path)
  void remove(std::string_view path, std::string_view name);       // missing is fine
  // Creates a symlink at `path`, replacing a file or link already there.
  void symlink(std::string_view path, const std::string& target);
  void set_times_and_mode(std::string_view path, std::int64_t mtime_ns, std::uint32_t mode,
                          bool is_link);
  // The same through an open file, before it is renamed into place; and its mode alone.
  void set_times_and_mode(const Fd& file, std::int64_t mtime_ns, std::uint32_t mode) const;
  void set_mode(const Fd& file, std::uint32_t mode) const;
  // Puts a verified file in place: its mode, then (with `sync`) its data made durable, closed,
  // renamed from `tmp` to `path`, and its time set last. The time marks a file as complete: a
  // rerun trusts a file whose size and time match what was sent.
  void place(Fd& file, std::string_view path, std::string_view tmp, std::int64_t mtime_ns,
             std::uint32_t mode, bool sync);

 private:
  std::string root_;
  bool keep_special_ = false;
  unsigned new_dir_mode_ = 0700;
  Fd root_fd_;
  // The last parent opened and each directory above it, one per component: files of one
  // directory follow each other, and the next directory is usually a sibling or a child, so
  // reaching it opens only the components that differ. Each was opened with O_NOFOLLOW from
  // the one above, so a link put in the way later is never followed.
  struct Opened {
    std::string name;
    Fd fd;
  };
  std::vector<Opened> opened_;
  std::string opened_path_;  // the components of opened_ joined; empty while being changed
};

// Makes `name` in the folder `dir_fd` a symlink to `target`, replacing a file or a link there
// (never a folder) atomically: a new link under a temporary name, renamed over the old entry.
// `shown` names it in errors.
void make_symlink_at(int dir_fd, const std::string& name, const std::string& target,
                     const std::string& shown);

// The temporary name of a file being unpacked, in the same directory as its final name so that
// the rename is atomic: ".<name>.nubo-part", or a hashed name when that would be too long.
std::string temp_name(std::string_view leaf);
// Whether `leaf` is such a temporary name: an entry called so is refused, since writing the
// entry it belongs to would overwrite it.
bool is_temp_name(std::string_view leaf);

}  // namespace nubo::transfer
