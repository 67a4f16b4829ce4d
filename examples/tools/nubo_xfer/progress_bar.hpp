// The progress display of nubo-xfer. On a terminal, one line redrawn in place in the manner of
// `rsync --info=progress2`: bytes, percent, rate, ETA and the compression ratio so far. Elsewhere
// (a pipe, a log file), a plain line every few seconds. The percentage shown never goes back.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

#include "nubo/transfer.hpp"

namespace nubo_xfer {

class ProgressBar {
 public:
  // `verb` names what is counted ("packed", "unpacked", "verified"); output goes to stderr.
  ProgressBar(std::string verb, bool quiet);
  // Its line ends also when the work it shows fails, before the error is printed.
  ~ProgressBar() { finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // The callback: draws, and returns false once a stop was asked for (Ctrl-C, SIGTERM:
  // nubo_cli::stop_requested).
  bool operator()(const nubo::transfer::Progress& p);
  // Ends the line on a terminal.
  void finish();

 private:
  std::string line(const nubo::transfer::Progress& p, bool with_file) const;

  std::string verb_;
  bool quiet_;
  bool tty_;
  bool drawn_ = false;
  int shown_percent_ = 0;
  std::chrono::steady_clock::time_point last_plain_{};
};

}  // namespace nubo_xfer
