// FileStore: one file per key in a folder. A value is written to a temporary file and renamed
// into place, so a reader sees either no key or the whole value, never part of it (rename is
// atomic on one file system, and on NFS for files in one folder).
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/small_file.hpp"
#include "nubo/error.hpp"
#include "parallel/rendezvous/store.hpp"

namespace nubo::parallel {
namespace {

std::string errno_text(int err) {
  return std::system_category().message(err);
}

class FileStore final : public Store {
 public:
  FileStore(std::string dir, std::string url) : dir_(std::move(dir)), url_(std::move(url)) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec || !std::filesystem::is_directory(dir_)) {
      throw Error(Errc::io, "cannot use the rendezvous folder " + dir_ + " (" + url_ +
                                "): " + (ec ? ec.message() : "it is not a folder"));
    }
  }

  void set(const std::string& key, std::string_view value) override {
    check_store_entry(key, value);
    const std::string final_path = path_of(key);
    const std::string tmp = write_temporary(key, value);
    if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      fail("cannot rename into", final_path, err);
    }
  }

  // link() fails with EEXIST when the key is there: atomic on every POSIX file system,
  // NFS included, where O_EXCL was not always.
  std::string set_if_absent(const std::string& key, std::string_view value) override {
    check_store_entry(key, value);
    const std::string final_path = path_of(key);
    const std::string tmp = write_temporary(key, value);
    const int linked = ::link(tmp.c_str(), final_path.c_str());
    const int err = errno;
    ::unlink(tmp.c_str());
    if (linked == 0) return std::string(value);
    if (err != EEXIST) fail("cannot link into", final_path, err);
    if (auto held = try_get(key)) return *held;
    fail("cannot read", final_path, ENOENT);
  }

  std::optional<std::string> try_get(const std::string& key) override {
    check_store_key(key);
    // A record is renamed into place whole and never exceeds kMaxStoreValue: anything else
    // there (larger, not a regular file) was not written by nubo.
    auto file =
        files::read_small_file_if_present(path_of(key), kMaxStoreValue, "rendezvous record");
    if (!file) return std::nullopt;
    return std::move(file->bytes);
  }

  std::string describe() const override { return url_; }

 private:
  // `value` in a new file of the folder, whole and closed: a key takes it by rename or link.
  std::string write_temporary(const std::string& key, std::string_view value) {
    static std::atomic<unsigned> counter{0};
    const std::string tmp = dir_ + "/.tmp." + std::to_string(::getpid()) + "." +
                            std::to_string(counter.fetch_add(1)) + "." + file_name(key);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail("cannot create", tmp, errno);
    std::size_t done = 0;
    while (done < value.size()) {
      ssize_t n = ::write(fd, value.data() + done, value.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        fail("cannot write", tmp, err);
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      fail("cannot write", tmp, err);
    }
    return tmp;
  }

  // '/' separates key parts; files live flat in the folder, so it becomes '='; the "k." prefix
  // keeps keys such as ".." or ".tmp" from naming anything special.
  static std::string file_name(const std::string& key) {
    std::string name = "k." + key;
    for (auto& c : name) {
      if (c == '/') c = '=';
    }
    return name;
  }
  std::string path_of(const std::string& key) const { return dir_ + "/" + file_name(key); }

  [[noreturn]] void fail(const char* what, const std::string& path, int err) const {
    throw Error(Errc::io, std::string("rendezvous store ") + url_ + ": " + what + " " + path +
                              ": " + errno_text(err));
  }

  std::string dir_;
  std::string url_;
};

}  // namespace

std::unique_ptr<Store> make_file_store(const std::string& dir, const std::string& url_text) {
  return std::make_unique<FileStore>(dir, url_text);
}

}  // namespace nubo::parallel
