#include "device/health/kernel_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

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

std::string read_kmsg(std::string& state) {
  const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    state = std::string("/dev/kmsg cannot be read: ") + std::strerror(errno) +
            " (kernel.dmesg_restrict needs CAP_SYSLOG); XIDs from before this call are not seen";
    return {};
  }
  std::string text;
  char record[8192];
  while (text.size() < kMaxLogBytes) {
    const ssize_t n = ::read(fd, record, sizeof record);
    if (n > 0) {
      text.append(record, static_cast<std::size_t>(n));
      if (text.back() != '\n') text += '\n';
    } else if (n < 0 && errno == EPIPE) {
      continue;  // the ring buffer overwrote a record we had not read yet: go on
    } else {
      break;  // EAGAIN: the end of the buffer
    }
  }
  ::close(fd);
  state = "read";
  return text;
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
    if (digits == 0 || pci.empty() || pci.size() > 32) continue;
    auto rest = line.substr(i);
    while (!rest.empty() && (rest.front() == ',' || rest.front() == ' ')) rest.remove_prefix(1);
    out.push_back({bus_id_of(pci), xid, std::string(rest.substr(0, 300))});
  }
  return out;
}

std::vector<KernelXid> read_kernel_xids(const std::string& path, std::string& state) {
  if (path.empty()) return parse_kernel_xids(read_kmsg(state));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    state = path + ": cannot be read";
    return {};
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0));
  in.seekg(static_cast<std::streamoff>(size > kMaxLogBytes ? size - kMaxLogBytes : 0));
  std::string text(std::min(size, kMaxLogBytes), '\0');  // a huge saved log: its newest part
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  state = "read";
  return parse_kernel_xids(text);
}

}  // namespace nubo::detail
