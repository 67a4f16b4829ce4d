// Logging to stderr, filtered by NUBO_LOG. Messages are complete sentences built by the caller.
#pragma once

#include <string_view>

#include "common/env.hpp"

namespace nubo::log {

// The level in force: NUBO_LOG read once; a bad value is reported once and `warn` is used
// (entry points that validate the environment report it as an error instead).
env::LogLevel level();
void write(env::LogLevel level, std::string_view message);

inline void error(std::string_view m) {
  write(env::LogLevel::error, m);
}
inline void warn(std::string_view m) {
  write(env::LogLevel::warn, m);
}
inline void info(std::string_view m) {
  write(env::LogLevel::info, m);
}
inline void debug(std::string_view m) {
  write(env::LogLevel::debug, m);
}

}  // namespace nubo::log
