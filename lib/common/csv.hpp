// A strict CSV reader for nubo's catalogs: a header row, then records. Lines starting with '#'
// are comments (catalogs keep their sources there). Fields may be quoted ("a, b" and "" for ").
// Every error names the source, the line and the problem; sizes are bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nubo::csv {

// The largest table read: every cloud's full catalog is tens of megabytes at most.
constexpr std::size_t kMaxBytes = 64u << 20;

// The header and the name of the source, shared by a table and its rows.
struct Schema {
  std::string source;
  std::vector<std::string> columns;
  std::size_t column_index(std::string_view name) const;  // throws when absent
  std::size_t find(std::string_view name) const;          // npos when absent
};

// One record, with access by column name; its errors name the source, line and column.
class Row {
 public:
  Row(std::shared_ptr<const Schema> schema, std::vector<std::string> fields, std::size_t line)
      : schema_(std::move(schema)), fields_(std::move(fields)), line_(line) {}

  std::size_t line() const { return line_; }
  const std::string& str(std::string_view column) const;
  // A column the format may lack (older or other providers' files): "" when it has no such one.
  const std::string& optional(std::string_view column) const;
  // Empty fields give the fallback; malformed or out-of-range ones throw.
  double number(std::string_view column, double min, double max, double fallback = -1) const;
  std::int64_t integer(std::string_view column, std::int64_t min, std::int64_t max) const;
  bool has_value(std::string_view column) const { return !str(column).empty(); }
  // "<source>:<line>: <message>"
  [[noreturn]] void fail(std::string_view message) const;

 private:
  std::shared_ptr<const Schema> schema_;
  std::vector<std::string> fields_;
  std::size_t line_;
};

// A record a lenient parse left out: its line and why.
struct BadLine {
  std::size_t line = 0;
  std::string reason;
};

class Table {
 public:
  // Parses `text`; `source` names it in errors (a file path or "embedded gpu_models.csv").
  // Every name in `required_columns` must be in the header. With `bad_lines`, a record that
  // cannot be read (a wrong number of fields, broken quoting) is reported there and left out
  // instead of failing the table; a bad header still fails it.
  static Table parse(std::string_view text, std::string source,
                     const std::vector<std::string>& required_columns,
                     std::vector<BadLine>* bad_lines = nullptr);

  const std::string& source() const { return schema_->source; }
  const std::vector<std::string>& columns() const { return schema_->columns; }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  std::shared_ptr<const Schema> schema_;
  std::vector<Row> rows_;
};

}  // namespace nubo::csv
