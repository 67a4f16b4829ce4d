#include "codec_help.hpp"

#include <vector>

#include "nubo/transfer.hpp"

namespace nubo_xfer {
namespace {

// "a, b or c".
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

}  // namespace

std::string codec_option_help(std::string_view default_codec, std::string_view default_note) {
  std::vector<std::string> items;
  for (const auto& c : nubo::transfer::codecs()) {
    std::string item(c.name);
    const bool is_default = c.name == default_codec;
    if (is_default) {
      item += " (default";
      if (!default_note.empty()) item.append("; ").append(default_note);
      item += ")";
      items.insert(items.begin(), item);
      continue;
    }
    if (!c.help.empty()) item.append(" (").append(c.help).append(")");
    items.push_back(item);
  }
  return listed(items);
}

std::string level_option_help() {
  std::string out = "codec level (";
  for (const auto& c : nubo::transfer::codecs()) {
    if (c.min_level == 0 && c.max_level == 0) continue;
    out += c.name;
    if (!c.level_means.empty()) out.append(" (").append(c.level_means).append(")");
    // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on " " + std::string.
    out.append(" ").append(std::to_string(c.min_level)).append(" to ");
    out.append(std::to_string(c.max_level)).append(", default ");
    out.append(std::to_string(c.default_level));
    if (c.min_level < 0 && c.level_means.empty()) out += ", negative: fast modes";
    out += "; ";
  }
  out += "0: the codec's default)";
  return out;
}

}  // namespace nubo_xfer
