// Turns a child's output stream into whole lines, each prefixed with the child's rank, so that
// the lines of several processes interleave without mixing. A line longer than kMaxLine is
// cut there (and marked), so a process that never writes a newline cannot make nubo-run hold
// an unbounded amount of its output.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nubo::run {

class LineBuffer {
 public:
  static constexpr std::size_t kMaxLine = 64 * 1024;

  explicit LineBuffer(std::string prefix) : prefix_(std::move(prefix)) {}

  // Adds bytes read from the stream; returns the complete prefixed lines they finish.
  std::string feed(std::string_view bytes);
  // The stream ended: the last line, prefixed and given its newline, if one was left open.
  std::string finish();

 private:
  std::string prefix_;
  std::string partial_;
};

}  // namespace nubo::run
