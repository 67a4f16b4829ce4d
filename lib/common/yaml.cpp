#include "common/yaml.hpp"

#include <cstdio>

#include "common/utf8.hpp"
#include "nubo/error.hpp"

namespace nubo::yaml {
namespace {

void check_key(std::string_view key) {
  bool ok = !key.empty();
  for (char c : key)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || c == '.' || c == '/');
  if (!ok) throw Error(Errc::internal, "YAML key '" + printable(key) + "' is not a plain key");
}

// Whether `value` can be a literal block that reads back exactly: printable ASCII, TAB and LF
// only, and at most one LF at the end (the clip and strip chompings keep one or none).
bool literal_block_fits(std::string_view value) {
  if (value.empty()) return false;
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (!((u >= 0x20 && u < 0x7f) || c == '\t' || c == '\n')) return false;
  }
  return !(value.size() >= 2 && value.ends_with("\n\n")) && value != "\n";
}

}  // namespace

std::string quoted(std::string_view value, std::string_view what) {
  std::string out = "\"";
  char buf[16];
  for (std::size_t at = 0; at < value.size();) {
    char32_t cp = 0;
    const auto n = utf8::sequence(value.substr(at), cp);
    if (n == 0)
      throw Error(Errc::invalid_argument, std::string(what) + ": '" + printable(value) +
                                              "' is not UTF-8 at byte " + std::to_string(at) +
                                              ", which YAML cannot hold");
    at += n;
    if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp >= 0x20 && cp < 0x7f) {
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x100) {
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
      out += buf;
    } else if (cp < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
      out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "\\U%08X", static_cast<unsigned>(cp));
      out += buf;
    }
  }
  return out + "\"";
}

void Writer::comment(std::string_view text) {
  for (const auto& line : utf8::ascii_lines(text))
    out_ += indent() + (line.empty() ? "#" : "# ") + line + "\n";
}

void Writer::put_key(std::string_view key) {
  check_key(key);
  if (dash_) {
    out_ += std::string(2 * (depth_ - 1), ' ') + "- ";
    dash_ = false;
  } else {
    out_ += indent();
  }
  out_ += key;
  out_ += ':';
}

void Writer::string(std::string_view key, std::string_view value) {
  put_key(key);
  out_ += ' ' + quoted(value, key) + "\n";
}

void Writer::text(std::string_view key, std::string_view value) {
  if (!literal_block_fits(value)) return string(key, value);
  put_key(key);
  // The indentation given (|2): a first line that starts with spaces stays content.
  const bool newline_at_end = value.back() == '\n';
  if (newline_at_end) value.remove_suffix(1);
  out_ += newline_at_end ? " |2\n" : " |2-\n";
  const std::string pad = indent() + "  ";
  for (std::size_t at = 0;;) {
    const auto end = value.find('\n', at);
    const auto line =
        value.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (!line.empty()) out_ += pad;
    out_ += line;
    out_ += '\n';
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
}

void Writer::integer(std::string_view key, long long value) {
  put_key(key);
  out_ += ' ' + std::to_string(value) + "\n";
}

void Writer::boolean(std::string_view key, bool value) {
  put_key(key);
  out_ += value ? " true\n" : " false\n";
}

void Writer::begin(std::string_view key) {
  put_key(key);
  out_ += '\n';
  ++depth_;
}

void Writer::end() {
  if (depth_ == 0) throw Error(Errc::internal, "YAML writer: end() without begin()");
  --depth_;
}

void Writer::items(std::string_view key) {
  begin(key);
}

void Writer::item() {
  ++depth_;
  dash_ = true;
}

void Writer::strings(std::string_view key, const std::vector<std::string>& values) {
  put_key(key);
  if (values.empty()) {
    out_ += " []\n";
    return;
  }
  out_ += '\n';
  for (const auto& v : values) out_ += indent() + "  - " + quoted(v, key) + "\n";
}

}  // namespace nubo::yaml
