// One catalog row, from a CSV record or a JSON object, behind one interface, so that a row is
// validated the same way whatever file it came from and every error names the file and line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/csv.hpp"
#include "nubo/cost.hpp"

namespace nubo::cost::detail {

class Fields {
 public:
  virtual ~Fields() = default;
  // The text of a field; "" when it is empty or absent (optional fields).
  virtual std::string str(std::string_view name) const = 0;
  // The text of a numeric field, as str(); a JSON field must then be a number, not a string.
  virtual std::string number_text(std::string_view name) const { return str(name); }
  // "<file>:<line>: <message>" as nubo::Error(invalid_argument).
  [[noreturn]] virtual void fail(std::string_view message) const = 0;
  virtual std::string where() const = 0;  // "<file>:<line>"

  // A number in [min, max]; `fallback` when empty; otherwise malformed or out of range fails.
  double number(std::string_view name, double min, double max, double fallback) const;
  // A required number in [min, max].
  double required(std::string_view name, double min, double max) const;
  std::string required_str(std::string_view name) const;
};

class CsvFields : public Fields {
 public:
  CsvFields(const csv::Row& row, const csv::Table& table) : row_(row), table_(table) {}
  std::string str(std::string_view name) const override;
  [[noreturn]] void fail(std::string_view message) const override { row_.fail(message); }
  std::string where() const override { return table_.source() + ":" + std::to_string(row_.line()); }

 private:
  const csv::Row& row_;
  const csv::Table& table_;
};

class JsonFields : public Fields {
 public:
  JsonFields(const nlohmann::json& object, std::string source, std::size_t line)
      : object_(object), source_(std::move(source)), line_(line) {}
  // JSON says what a value is: a text field must be a string, a numeric one a number.
  std::string str(std::string_view name) const override;
  std::string number_text(std::string_view name) const override;
  [[noreturn]] void fail(std::string_view message) const override;
  std::string where() const override { return source_ + ":" + std::to_string(line_); }

 private:
  const nlohmann::json& object_;
  std::string source_;
  std::size_t line_;
};

// What identifies a catalog row: its provider, and its name and region in any case. A row with
// the key of one already loaded replaces it.
std::string row_key(const Instance& in);

// The line of each element of the top-level array `key` in a JSON text (1-based), in order; a
// small scanner that skips strings, so "instances[3]" can be reported as a line like a CSV row.
std::vector<std::size_t> json_element_lines(std::string_view text, std::string_view key);

}  // namespace nubo::cost::detail
