#include "transfer/store/parts.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "transfer/file_io.hpp"

namespace nubo::store {
namespace {

constexpr std::uint64_t kMinPart = 8 << 20, kMaxPart = 64 << 20;

void make_dirs(const std::string& path) {
  for (std::size_t at = 1; at != std::string::npos;) {
    at = path.find('/', at + 1);
    const auto part = path.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      transfer::throw_io("create the directory", part, errno);
  }
}

}  // namespace

std::string cache_dir(const std::string& override) {
  std::string dir = override;
  if (dir.empty()) {
    // Never a shared folder such as /tmp: another user could make it first, or put a link there,
    // and have this one's journals written where they chose.
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (xdg && *xdg)
      dir = std::string(xdg) + "/nubo/s3";
    else if (home && *home)
      dir = std::string(home) + "/.cache/nubo/s3";
    else
      throw Error(Errc::invalid_argument,
                  "no folder for the upload journals: set HOME or XDG_CACHE_HOME, or give a "
                  "journal folder (journal_dir)");
  }
  make_dirs(dir);
  if (!override.empty()) return dir;  // the caller's folder, as it named it
  // The folder itself, not a link, and this user's: its journals say what to resume (and each
  // journal is opened without following a link, file_io.hpp's open_write).
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) transfer::throw_io("read", dir, errno);
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    throw Error(Errc::invalid_argument,
                dir +
                    " is not a folder of this user's (a link, or another user's): refusing to "
                    "keep upload journals there");
  return dir;
}

std::uint64_t part_size_for(std::uint64_t size) {
  // About 1,000 parts: few requests, and little to redo after an interruption; beyond 64 GB
  // the parts stay at 64 MiB until the 10,000-part limit makes them larger.
  auto part = std::clamp<std::uint64_t>(size / 1000, kMinPart, kMaxPart);
  part = std::max(part, (size + kMaxParts - 1) / kMaxParts);
  return (part + (1 << 20) - 1) / (1 << 20) * (1 << 20);  // whole MiB
}

void run_parts(std::size_t count, int streams, const std::function<void(std::size_t)>& work,
               const std::function<bool()>& tick) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::mutex mutex;
  std::vector<std::thread> threads;
  std::atomic<int> running{0};
  for (int t = 0; t < std::max(1, streams); ++t) {
    ++running;
    threads.emplace_back([&] {
      for (;;) {
        const auto i = next++;
        if (i >= count || stop) break;
        try {
          work(i);
        } catch (...) {
          std::lock_guard lock(mutex);
          if (!failure) failure = std::current_exception();
          stop = true;
        }
      }
      --running;
    });
  }
  while (running > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!stop && tick && !tick()) {
      std::lock_guard lock(mutex);
      if (!failure) failure = std::make_exception_ptr(Error(Errc::cancelled, "cancelled"));
      stop = true;
    }
  }
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

bool PartProgress::tick() {
  if (!options.progress) return true;
  transfer::Progress p;
  p.bytes_total = total;
  p.bytes_done = done;
  p.bytes_written = written;
  p.elapsed_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  p.rate = p.elapsed_seconds > 0 ? static_cast<double>(written) / p.elapsed_seconds : 0;
  p.files_total = 1;
  p.files_done = done == total ? 1 : 0;
  return options.progress(p);
}

void abort_upload(Store& store, const ObjectUrl& url, const std::string& upload_id,
                  transfer::Journal* journal, const std::string& what) {
  try {
    store.abort_multipart(url, upload_id);
    if (journal) journal->remove();
  } catch (const Error& e) {
    log::warn("aborting " + what + ": " + e.what());
  }
}

void add_summary(transfer::CopySummary& total, const transfer::CopySummary& one) {
  total.files += one.files;
  total.bytes += one.bytes;
  total.bytes_sent += one.bytes_sent;
  total.bytes_resumed += one.bytes_resumed;
  total.bytes_server_side += one.bytes_server_side;
  total.parts += one.parts;
  total.links_followed += one.links_followed;
  total.links_stored += one.links_stored;
  total.links_skipped += one.links_skipped;
}

}  // namespace nubo::store
