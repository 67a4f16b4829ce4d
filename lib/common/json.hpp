// JSON documents nubo reads (catalogs, profiles, checkpoints, caches): nlohmann's parser with
// every failure, a number out of range (1e400) as much as a syntax error, turned into one clear
// error, and a key that appears twice in one object refused rather than silently overwritten.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace nubo::json {

// The document in `text`; Error(invalid_argument) "<what>: not valid JSON: <why>", or "<what>:
// the key 'k' appears twice in instances[3]", otherwise.
nlohmann::json parse(std::string_view text, const std::string& what);

}  // namespace nubo::json
