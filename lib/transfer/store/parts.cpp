#include "transfer/store/parts.hpp"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "transfer/file_io.hpp"

namespace nubo::store {

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
