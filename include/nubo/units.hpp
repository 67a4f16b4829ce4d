// Sizes, rates and durations, read and written the same way by every tool and binding
// (docs/units.md). C: nubo_units.h; Python: nubo.units.
//
// Sizes follow zstd and rclone: K, M, G, T, P (and Ki, Mi, ... KiB, MiB, ...) are powers of
// 1024; KB, MB, GB, TB, PB are powers of 1000. "4M" = "4MiB" = 4,194,304 bytes; "4MB" =
// 4,000,000. Case does not matter; a bare number, or "B", is bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "nubo/export.hpp"

namespace nubo {

// Every parser refuses an empty text, NaN, infinities, negative numbers, unknown units and
// values out of range with Error(invalid_argument) naming `what` (a flag or field) and the text.

// Bytes: "4M", "64MiB", "1.5G" (rounded to the byte), "100MB", "512" (at most 2^64 - 1).
NUBO_API std::uint64_t parse_bytes(std::string_view text, std::string_view what);
// Bytes per second: a size, optionally followed by "/s": "100M", "1.5GB/s".
NUBO_API double parse_rate(std::string_view text, std::string_view what);
// Seconds: "90" (a bare number is seconds), "90s", "500ms", "10m", "6h", "1d", "1w", and sums
// of them, largest first: "1h30m", "2m30s".
NUBO_API double parse_duration(std::string_view text, std::string_view what);

// A count, as model sizes and token counts are written: "7B" (7 x 10^9), "70M", "1.5T", "125K",
// "2e9", "1000"; K, M, B (or G) and T are powers of 1000.
NUBO_API double parse_count(std::string_view text, std::string_view what);

// "512 B", "1.5 KiB", "80.0 GiB" (`decimals` after the point, above bytes).
NUBO_API std::string format_bytes(double bytes, int decimals = 1);
// For people: "420 ms", "3.4 s", "45 s", "30 min", "10.0 h", "3.0 d"; "forever" when infinite.
NUBO_API std::string format_duration(double seconds);
// For progress lines: "0:01:05"; "--:--:--" when unknown (negative, or past 99 hours).
NUBO_API std::string format_clock(double seconds);

}  // namespace nubo
