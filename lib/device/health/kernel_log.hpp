// XID lines of the kernel log: the driver writes every XID there ("NVRM: Xid (PCI:0000:3b:00):
// 79, pid=..., GPU has fallen off the bus."), including those from before this process, which
// NVML's events do not replay.
#pragma once

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

// Reads `path` ("" for /dev/kmsg, without blocking) and parses it. `state` says "read" or why
// nothing could be read (e.g. kernel.dmesg_restrict without CAP_SYSLOG).
std::vector<KernelXid> read_kernel_xids(const std::string& path, std::string& state);

}  // namespace nubo::detail
