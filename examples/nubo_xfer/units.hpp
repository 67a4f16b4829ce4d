// Sizes and rates on the command line: "4M", "64MiB", "1.5G", "100MB", "512k" or plain bytes.
// K, M, G, T and KiB.. are powers of 1024; KB, MB, GB, TB are powers of 1000.
#pragma once

#include <cstdint>
#include <string>

namespace nubo_xfer {

// Throws std::invalid_argument with a message naming `option` and what it accepts.
std::uint64_t parse_size(const std::string& text, const std::string& option);

// "1.23 GiB", "512 B".
std::string format_bytes(double bytes);
// "0:01:05"; "--:--:--" when unknown (negative).
std::string format_duration(double seconds);

}  // namespace nubo_xfer
