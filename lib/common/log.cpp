#include "common/log.hpp"

#include <cstdio>
#include <mutex>

#include "nubo/error.hpp"

namespace nubo::log {

env::LogLevel level() {
  static const env::LogLevel lvl = [] {
    try {
      return env::log_level();
    } catch (const Error& e) {
      std::fprintf(stderr, "nubo: %s; using warn\n", e.what());
      return env::LogLevel::warn;
    }
  }();
  return lvl;
}

void write(env::LogLevel lvl, std::string_view message) {
  if (static_cast<int>(lvl) > static_cast<int>(level())) return;
  static const char* names[] = {"error", "warn", "info", "debug"};
  static std::mutex mutex;  // one line at a time from many threads
  // Names in a message may come from an archive or a peer: shown escaped, one line each.
  const auto line = printable(message);
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "nubo %s: %s\n", names[static_cast<int>(lvl)], line.c_str());
}

}  // namespace nubo::log
