#include "device/health/kernel_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>

#include "common/small_file.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

constexpr std::size_t kMaxLogBytes = 64u << 20;  // a kernel ring buffer is far smaller

// "0000:3b:00" (the driver's form) as "00000000:3b:00.0".
std::string bus_id_of(std::string_view pci) {
  const auto colon = pci.find(':');
  if (colon == std::string_view::npos) return std::string(pci);
  std::string domain(pci.substr(0, colon));
  while (domain.size() < 8) domain.insert(domain.begin(), '0');
  std::string rest(pci.substr(colon + 1));
  for (auto& c : rest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto& c : domain) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (rest.find('.') == std::string::npos) rest += ".0";
  return domain + ":" + rest;
}

}  // namespace

std::vector<KernelXid> parse_kernel_xids(std::string_view log) {
  std::vector<KernelXid> out;
  constexpr std::string_view kMark = "NVRM: Xid (PCI:";
  std::size_t pos = 0;
  while ((pos = log.find(kMark, pos)) != std::string_view::npos) {
    const auto end_of_line = log.find('\n', pos);
    const auto line =
        log.substr(pos, end_of_line == std::string_view::npos ? log.npos : end_of_line - pos);
    pos += kMark.size();
    const auto close = line.find("): ");
    if (close == std::string_view::npos) continue;
    const auto pci = line.substr(kMark.size(), close - kMark.size());
    std::size_t i = close + 3;
    int xid = 0, digits = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) && digits < 6) {
      xid = xid * 10 + (line[i] - '0');
      ++i;
      ++digits;
    }
    // A bus id is hex digits, ':' and '.': anything else on the line is not one.
    if (digits == 0 || pci.empty() || pci.size() > 16 ||
        pci.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos)
      continue;
    auto rest = line.substr(i);
    while (!rest.empty() && (rest.front() == ',' || rest.front() == ' ')) rest.remove_prefix(1);
    // The rest names a process, which any user can: shown escaped, never as the log had it.
    out.push_back({bus_id_of(pci), xid, printable(rest.substr(0, 300))});
  }
  return out;
}

KernelLog::KernelLog(std::string path) : path_(std::move(path)) {}

KernelLog::~KernelLog() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<KernelXid> KernelLog::read(std::string& state) {
  return parse_kernel_xids(path_.empty() ? read_kmsg(state) : read_file(state));
}

std::string KernelLog::read_kmsg(std::string& state) {
  if (fd_ < 0) fd_ = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    state = std::string("/dev/kmsg cannot be read: ") + std::strerror(errno) +
            " (kernel.dmesg_restrict needs CAP_SYSLOG); XIDs from before this call are not seen";
    return {};
  }
  std::string text;
  char record[8192];
  while (text.size() < kMaxLogBytes) {
    const ssize_t n = ::read(fd_, record, sizeof record);
    if (n > 0) {
      text.append(record, static_cast<std::size_t>(n));
      if (text.back() != '\n') text += '\n';
    } else if (n < 0 && errno == EPIPE) {
      continue;  // the ring buffer overwrote a record we had not read yet: go on
    } else {
      break;  // EAGAIN: nothing more for now
    }
  }
  state = "read";
  return text;
}

std::string KernelLog::read_file(std::string& state) {
  // A regular file only, checked on its descriptor: a FIFO once hung the health check here.
  std::optional<files::OpenFile> in;
  try {
    in = files::open_regular_file_if_present(path_, "kernel log");
  } catch (const Error& e) {
    state = e.what();
    return {};
  }
  if (!in) {
    state = path_ + ": cannot be read (it does not exist)";
    return {};
  }
  const auto size = in->size();
  if (size < offset_) offset_ = 0;  // rotated or truncated: read it anew
  // A huge log: its newest part.
  if (size - offset_ > kMaxLogBytes) offset_ = size - kMaxLogBytes;
  std::string text(static_cast<std::size_t>(size - offset_), '\0');
  try {
    text.resize(in->read_at(text.data(), text.size(), offset_));
  } catch (const Error& e) {
    state = e.what();
    return {};
  }
  // Whole lines only: a line still being written is read next time.
  const auto last = text.rfind('\n');
  text.resize(last == std::string::npos ? 0 : last + 1);
  offset_ += text.size();
  state = "read";
  return text;
}

}  // namespace nubo::detail
