#include "common/csv.hpp"

#include <cctype>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::csv {
namespace {

constexpr std::size_t kMaxFields = 256;

[[noreturn]] void fail_at(const std::string& source, std::size_t line, std::string_view msg) {
  throw Error(Errc::invalid_argument,
              source + ":" + std::to_string(line) + ": " + std::string(msg));
}

// Splits one physical line into fields (records never span lines in nubo's catalogs).
std::vector<std::string> split_record(std::string_view line, const std::string& source,
                                      std::size_t line_no) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
    } else if (c == '"') {
      if (!std::string(text::trim(field)).empty())
        fail_at(source, line_no, "a quote inside an unquoted field");
      field.clear();
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields.push_back(was_quoted ? field : std::string(text::trim(field)));
      field.clear();
      was_quoted = false;
      if (fields.size() > kMaxFields) fail_at(source, line_no, "too many fields");
    } else {
      if (was_quoted && !std::isspace(static_cast<unsigned char>(c)))
        fail_at(source, line_no, "text after a closing quote");
      field += c;
    }
  }
  if (quoted) fail_at(source, line_no, "unterminated quoted field");
  fields.push_back(was_quoted ? field : std::string(text::trim(field)));
  return fields;
}

}  // namespace

Table Table::parse(std::string_view text, std::string source,
                   const std::vector<std::string>& required_columns,
                   std::vector<BadLine>* bad_lines) {
  if (text.size() > kMaxBytes) fail_at(source, 0, "file is larger than 64 MiB");
  auto schema = std::make_shared<Schema>();
  schema->source = std::move(source);
  const std::string& src = schema->source;
  Table table;
  std::size_t line_no = 0;
  bool have_header = false;
  for (auto raw : text::split(text, '\n')) {
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    auto line = text::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields;
    try {
      if (line.find('\0') != std::string_view::npos) fail_at(src, line_no, "NUL byte");
      fields = split_record(line, src, line_no);
      if (have_header && fields.size() != schema->columns.size())
        fail_at(src, line_no,
                "expected " + std::to_string(schema->columns.size()) + " fields, found " +
                    std::to_string(fields.size()));
    } catch (const Error& e) {
      if (!bad_lines || !have_header) throw;
      // The message without its "<source>:<line>: " prefix: the line is kept beside it.
      std::string why = e.what();
      const auto prefix = src + ":" + std::to_string(line_no) + ": ";
      if (why.starts_with(prefix)) why.erase(0, prefix.size());
      bad_lines->push_back({line_no, why});
      continue;
    }
    if (!have_header) {
      for (auto& f : fields) {
        if (f.empty()) fail_at(src, line_no, "empty column name in the header");
        for (auto& seen : schema->columns)
          if (seen == f) fail_at(src, line_no, "column '" + f + "' appears twice");
        schema->columns.push_back(f);
      }
      for (auto& req : required_columns) schema->column_index(req);
      have_header = true;
      continue;
    }
    table.rows_.emplace_back(schema, std::move(fields), line_no);
  }
  if (!have_header) fail_at(src, line_no, "no header row");
  table.schema_ = std::move(schema);
  return table;
}

std::size_t Schema::find(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  return std::string::npos;
}

std::size_t Schema::column_index(std::string_view name) const {
  if (const auto i = find(name); i != std::string::npos) return i;
  throw Error(Errc::invalid_argument,
              source + ": missing column '" + std::string(name) + "' in the header");
}

const std::string& Row::str(std::string_view column) const {
  return fields_[schema_->column_index(column)];
}

const std::string& Row::optional(std::string_view column) const {
  static const std::string kAbsent;
  const auto i = schema_->find(column);
  return i == std::string::npos ? kAbsent : fields_[i];
}

void Row::fail(std::string_view message) const {
  fail_at(schema_->source, line_, message);
}

double Row::number(std::string_view column, double min, double max, double fallback) const {
  const auto& s = str(column);
  if (s.empty()) return fallback;
  try {
    return text::parse_double(s, column, min, max);
  } catch (const Error& e) {
    fail(e.what());
  }
}

std::int64_t Row::integer(std::string_view column, std::int64_t min, std::int64_t max) const {
  const auto& s = str(column);
  if (s.empty()) fail(std::string(column) + ": missing value");
  try {
    return text::parse_int(s, column, min, max);
  } catch (const Error& e) {
    fail(e.what());
  }
}

}  // namespace nubo::csv
