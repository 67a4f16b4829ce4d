#include "cost/fields.hpp"

#include <charconv>
#include <cmath>
#include <vector>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::detail {
namespace {

// A JSON value as a message shows it: its text, cut short when long (a value may be megabytes).
std::string shown(const nlohmann::json& v) {
  constexpr std::size_t kMaxShown = 60;
  auto text = v.dump();
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

}  // namespace

double Fields::number(std::string_view name, double min, double max, double fallback) const {
  auto s = number_text(name);
  if (text::trim(s).empty()) return fallback;
  try {
    return text::parse_double(text::trim(s), name, min, max);
  } catch (const Error& e) {
    fail(e.what());
  }
  return fallback;  // not reached: fail() throws (a virtual [[noreturn]] is not trusted by gcc)
}

double Fields::required(std::string_view name, double min, double max) const {
  if (text::trim(number_text(name)).empty()) fail(std::string(name) + ": missing value");
  return number(name, min, max, 0);
}

std::string Fields::required_str(std::string_view name) const {
  auto s = std::string(text::trim(str(name)));
  if (s.empty()) fail(std::string(name) + ": missing value");
  return s;
}

std::string CsvFields::str(std::string_view name) const {
  // Optional columns may be absent from a user's header.
  for (const auto& column : table_.columns())
    if (column == name) return row_.str(name);
  return "";
}

std::string JsonFields::str(std::string_view name) const {
  auto it = object_.find(std::string(name));
  if (it == object_.end() || it->is_null()) return "";
  if (!it->is_string())
    fail(std::string(name) + ": expected a string, got " + it->type_name() + " " + shown(*it));
  return it->get<std::string>();
}

std::string JsonFields::number_text(std::string_view name) const {
  auto it = object_.find(std::string(name));
  if (it == object_.end() || it->is_null()) return "";
  if (!it->is_number()) {
    fail(std::string(name) + ": expected a number, got " + it->type_name() + " " + shown(*it) +
         (it->is_string() ? " (write numbers without quotes)" : ""));
  }
  // The shortest text that reads back as the same double.
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, it->get<double>()).ptr;
  return {buf, end};
}

void JsonFields::fail(std::string_view message) const {
  throw Error(Errc::invalid_argument, where() + ": " + std::string(message));
}

std::vector<std::size_t> json_element_lines(std::string_view text, std::string_view key) {
  std::vector<std::size_t> lines;
  std::size_t line = 1;
  int depth = 0;            // nesting of {} and []
  int target_depth = -1;    // depth inside the wanted array, once found
  std::string last_string;  // the most recent string at depth 1 (a candidate key)
  bool expect_array = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {
      std::string s;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;
        else
          s += text[i];
      }
      if (depth == 1) last_string = s;
    } else if (c == ':' && depth == 1) {
      expect_array = last_string == key;
    } else if (c == '[' || c == '{') {
      if (c == '[' && depth == 1 && expect_array)
        target_depth = depth + 1;
      else if (c == '{' && depth == target_depth)
        lines.push_back(line);
      expect_array = false;
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
      if (depth < target_depth - 1 || (c == ']' && depth == target_depth - 1)) target_depth = -1;
    }
  }
  return lines;
}

std::string row_key(const Instance& in) {
  return in.provider + '\n' + text::lower(in.name) + '\n' + text::lower(in.region);
}

}  // namespace nubo::cost::detail
