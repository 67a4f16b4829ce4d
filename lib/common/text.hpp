// Small text helpers shared by every parser: splitting, trimming, strict number parsing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nubo::text {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
std::vector<std::string_view> split_whitespace(std::string_view s);
std::string lower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);

// Strict parsers: the whole string must be a number in range, else nubo::Error(invalid_argument)
// whose message is "<what>: <problem> in '<s>'".
std::int64_t parse_int(std::string_view s, std::string_view what, std::int64_t min,
                       std::int64_t max);
double parse_double(std::string_view s, std::string_view what, double min, double max);

// A UTC time as "2026-12-08T09:00:00Z" (seconds optional: "2026-12-08T09:00Z"), in seconds since
// the epoch; nullopt for anything else, a field out of its range included.
std::optional<long long> parse_utc(std::string_view s);
// The time as parse_utc reads it, seconds and all: "2026-12-08T09:00:00Z".
std::string utc_text(long long seconds);

// A run of decimal digits with a comma every three from the right: "2600" -> "2,600".
std::string group_digits(std::string_view digits);

// "a, b and c" style listing for messages.
std::string join(const std::vector<std::string>& items, std::string_view sep);

// Bytes as lower-case hexadecimal, two digits each (digests, ids, keys).
std::string hex(const void* data, std::size_t size);
// The bytes of `s`, which must hold 2 * `size` hexadecimal digits (either case), into `out`.
// Returns the position of the first character that is not a hexadecimal digit, or npos when
// every one is (std::string_view::npos too when the length is wrong: check it first).
std::size_t unhex(std::string_view s, void* out, std::size_t size);

// Bytes in standard base64 with padding (HTTP headers, JSON APIs), and back: nullopt when `s` is
// not base64 (a character outside the alphabet, a wrong length or misplaced padding).
std::string base64(const void* data, std::size_t size);
std::optional<std::vector<std::byte>> unbase64(std::string_view s);

}  // namespace nubo::text
