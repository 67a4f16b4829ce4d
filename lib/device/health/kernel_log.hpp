// XID lines of the kernel log: the driver writes every XID there ("NVRM: Xid (PCI:0000:3b:00):
// 79, pid=..., GPU has fallen off the bus."), including those from before this process, which
// NVML's events do not replay.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nubo::detail {

struct KernelXid {
  std::string pci_bus_id;  // as nvidia-smi writes it: "00000000:3b:00.0"
  int xid = 0;
  std::string text;  // the rest of the line, for the message
};

// The XIDs in log text (dmesg's or /dev/kmsg's format); other lines are skipped.
std::vector<KernelXid> parse_kernel_xids(std::string_view log);

// The kernel log, read a little at a time: each read() gives the XIDs written since the one
// before (the first, what is there), so that a watch reading it every second does not parse the
// whole ring buffer each time.
class KernelLog {
 public:
  // "" for /dev/kmsg (kept open: each read continues where the last one stopped, without
  // blocking); else a file in dmesg's format, read on from the last whole line read.
  explicit KernelLog(std::string path);
  ~KernelLog();
  KernelLog(const KernelLog&) = delete;
  KernelLog& operator=(const KernelLog&) = delete;

  // `state` says "read", or why nothing could be read (kernel.dmesg_restrict without
  // CAP_SYSLOG, a missing file).
  std::vector<KernelXid> read(std::string& state);

 private:
  std::string read_kmsg(std::string& state);
  std::string read_file(std::string& state);

  std::string path_;
  int fd_ = -1;               // /dev/kmsg once opened
  std::uint64_t offset_ = 0;  // a file: the bytes already read
};

}  // namespace nubo::detail
