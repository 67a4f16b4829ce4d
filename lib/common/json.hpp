// JSON documents nubo reads (catalogs, profiles): nlohmann's parser with every failure, a
// number out of range (1e400) as much as a syntax error, turned into one clear error.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace nubo::json {

// The document in `text`; Error(invalid_argument) "<what>: not valid JSON: <why>" otherwise.
nlohmann::json parse(std::string_view text, const std::string& what);

}  // namespace nubo::json
