#include "progress_bar.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

#include "nubo/units.hpp"
#include "stop_signals.hpp"

namespace nubo_xfer {

namespace {
constexpr auto kPlainEvery = std::chrono::seconds(5);

int terminal_width() {
  winsize w{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20) return w.ws_col;
  return 80;
}
}  // namespace

ProgressBar::ProgressBar(std::string verb, bool quiet)
    : verb_(std::move(verb)), quiet_(quiet), tty_(::isatty(STDERR_FILENO) != 0) {
  last_plain_ = std::chrono::steady_clock::now();
}

std::string ProgressBar::line(const nubo::transfer::Progress& p, bool with_file) const {
  char buf[256];
  auto moved = p.bytes_done - std::min(p.bytes_skipped, p.bytes_done);
  std::string ratio = "-";
  if (moved > 0 && p.bytes_written > 0) {
    char r[16];
    std::snprintf(r, sizeof r, "%.3f",
                  static_cast<double>(p.bytes_written) / static_cast<double>(moved));
    ratio = r;
  }
  std::snprintf(buf, sizeof buf, "%12s %3d%% %12s/s %9s  ratio %s",
                nubo::format_bytes(static_cast<double>(p.bytes_done), 2).c_str(), shown_percent_,
                nubo::format_bytes(p.rate, 2).c_str(), nubo::format_clock(p.eta_seconds).c_str(),
                ratio.c_str());
  std::string s = buf;
  if (p.bytes_skipped > 0)
    s += "  (" + nubo::format_bytes(static_cast<double>(p.bytes_skipped), 2) + " kept)";
  if (with_file && !p.current_file.empty()) s += "  " + std::string(p.current_file);
  return s;
}

bool ProgressBar::operator()(const nubo::transfer::Progress& p) {
  if (nubo_cli::stop_requested) return false;
  if (quiet_) return true;
  int percent = p.bytes_total == 0 ? 100
                                   : static_cast<int>(100.0 * static_cast<double>(p.bytes_done) /
                                                      static_cast<double>(p.bytes_total));
  shown_percent_ = std::clamp(std::max(shown_percent_, percent), 0, 100);
  if (tty_) {
    auto s = line(p, true);
    auto width = static_cast<std::size_t>(terminal_width() - 1);
    if (s.size() > width) s.resize(width);
    s.resize(width, ' ');  // overwrite what a longer previous line left
    std::fprintf(stderr, "\r%s", s.c_str());
    std::fflush(stderr);
    drawn_ = true;
  } else {
    auto now = std::chrono::steady_clock::now();
    // The end is reported by the summary line instead.
    if (now - last_plain_ >= kPlainEvery) {
      last_plain_ = now;
      std::fprintf(stderr, "nubo-xfer: %s %s\n", verb_.c_str(), line(p, false).c_str());
    }
  }
  return true;
}

void ProgressBar::finish() {
  if (tty_ && drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace nubo_xfer
