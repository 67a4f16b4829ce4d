// Bounded copies into the fixed-size char arrays of the plugin ABI: whatever a driver returns,
// the destination ends up NUL-terminated and nothing is written past its end.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace nubo::cuda_plugin {

// Copies at most N-1 bytes of src (NULL counts as "") and terminates; truncates silently.
template <std::size_t N>
void copy_text(char (&dst)[N], const char* src) noexcept {
  static_assert(N > 0);
  std::size_t n = 0;
  if (src) {
    while (n + 1 < N && src[n] != '\0') ++n;
    std::memcpy(dst, src, n);
  }
  dst[n] = '\0';
}

// A driver may fill a buffer without terminating it; this makes sure it is terminated.
template <std::size_t N>
void terminate_text(char (&buf)[N]) noexcept {
  buf[N - 1] = '\0';
}

// The PCI address as nvidia-smi and NVML write it: 8-digit domain, "00000000:07:00.0".
template <std::size_t N>
void format_bus_id(char (&dst)[N], unsigned domain, unsigned bus, unsigned device) noexcept {
  std::snprintf(dst, N, "%08x:%02x:%02x.0", domain, bus & 0xffu, device & 0x1fu);
}

}  // namespace nubo::cuda_plugin
