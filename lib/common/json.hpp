// JSON documents nubo reads (catalogs, profiles, queues, checkpoints, caches, answers of
// servers): nlohmann's parser with every failure, a number out of range (1e400) as much as a
// syntax error, turned into one clear error, a key that appears twice in one object refused
// rather than silently overwritten, and nesting bounded: a document costs memory linear in its
// size however deep it is, and one nested deeper than kMaxDepth is refused at the level that
// passed it.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

namespace nubo::json {

// Deeper than any document nubo reads (a catalog is 4 levels, a queue 3), shallow enough that
// nothing recursive over a document (nlohmann's dump and destructor) can exhaust a stack.
constexpr std::size_t kMaxDepth = 256;

// The document in `text`; Error(invalid_argument) "<what>: not valid JSON: <why>", "<what>: the
// key 'k' appears twice in instances[3]", or "<what>: nested deeper than 256 levels at a.b[0]...",
// otherwise.
nlohmann::json parse(std::string_view text, const std::string& what);

namespace detail {
[[noreturn]] void out_of_range(const nlohmann::json& v, const std::string& what, long double min,
                               long double max);
// The value as a double when it is a finite number; Error naming `what` otherwise.
double finite(const nlohmann::json& v, const std::string& what);
// The value exactly, when it is a whole number; Error naming `what` otherwise. long double holds
// every int64 and uint64 exactly (a 64-bit mantissa on x86-64, 113 bits on aarch64).
long double whole(const nlohmann::json& v, const std::string& what);
}  // namespace detail

// The number `v` as T, when it is one T can hold exactly and lies in [min, max]: a whole number
// for an integral T (1.0 is, 1.5 is not), finite for a floating T. Error(invalid_argument)
// "<what>: ..." naming the value and the range otherwise: a document's numbers never reach a
// conversion that is undefined (1e30 into an int) or silently wraps (-1 into an unsigned).
template <class T>
T number(const nlohmann::json& v, const std::string& what, T min = std::numeric_limits<T>::lowest(),
         T max = std::numeric_limits<T>::max()) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  const long double x =
      std::is_floating_point_v<T> ? detail::finite(v, what) : detail::whole(v, what);
  if (!(x >= static_cast<long double>(min) && x <= static_cast<long double>(max)))
    detail::out_of_range(v, what, min, max);
  return static_cast<T>(x);
}

}  // namespace nubo::json
