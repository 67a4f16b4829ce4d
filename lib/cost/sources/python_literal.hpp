// SkyPilot writes its GpuInfo column as a Python literal ({'Gpus': [{'Name': 'A100', ...}]}):
// this reads that subset of Python (dicts, lists, strings in either quote, numbers, True,
// False, None) into JSON, so the catalog reads it with the JSON parser it trusts.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace nubo::cost::sources {

// nullopt when `text` is not such a literal (or nests deeper than a catalog's ever does).
std::optional<nlohmann::json> parse_python_literal(std::string_view text);

}  // namespace nubo::cost::sources
