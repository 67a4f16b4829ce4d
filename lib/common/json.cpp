#include "common/json.hpp"

#include "nubo/error.hpp"

namespace nubo::json {

nlohmann::json parse(std::string_view text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e400
    throw Error(Errc::invalid_argument, what + ": not valid JSON: " + e.what());
  }
}

}  // namespace nubo::json
