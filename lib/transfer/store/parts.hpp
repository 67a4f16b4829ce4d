// What the copies of objects in parts share (copy.hpp's uploads and downloads, copy_between.hpp's
// copies between stores, and the trees and syncs made of them): the threads that move the
// parts, the progress they report, how an upload that will not complete is given up, and how
// their summaries add up.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "nubo/copy.hpp"
#include "transfer/journal.hpp"
#include "transfer/store/store.hpp"

namespace nubo::store {

// S3's most parts in one multipart upload.
inline constexpr std::uint64_t kMaxParts = 10000;

// The part size for an object of `size` bytes: about 1,000 parts of 8 to 64 MiB, more than 64
// MiB only beyond 10,000 parts, in whole MiB.
std::uint64_t part_size_for(std::uint64_t size);

// Where upload journals live: `override`, else $XDG_CACHE_HOME/nubo/s3 or
// ~/.cache/nubo/s3; created when missing.
std::string cache_dir(const std::string& override);

// Runs work(i) for i in [0, count) on `streams` threads, in increasing order of i; the calling
// thread reports progress every 20 ms (tick returns false: cancel, Error(cancelled)). The first
// failure stops the rest and is rethrown.
void run_parts(std::size_t count, int streams, const std::function<void(std::size_t)>& work,
               const std::function<bool()>& tick);

// One object's progress, as the caller's callback sees it.
struct PartProgress {
  const transfer::CopyOptions& options;
  std::uint64_t total;
  std::atomic<std::uint64_t> done{0}, written{0};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // false: the callback asked to stop.
  bool tick();
};

// Aborts a multipart upload that will not complete (a cancel, bytes that did not verify), so
// that nothing stays billed, and forgets its journal when there is one. Failing that, it warns
// naming `what` (the bucket's lifecycle rules expire what is left), and the caller's error
// stands.
void abort_upload(Store& store, const ObjectUrl& url, const std::string& upload_id,
                  transfer::Journal* journal, const std::string& what);

// `one`'s counts added to `total`'s (its seconds aside: a whole is timed as a whole).
void add_summary(transfer::CopySummary& total, const transfer::CopySummary& one);

}  // namespace nubo::store
