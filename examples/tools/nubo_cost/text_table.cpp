#include "text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nubo_cost {

TextTable::TextTable(std::vector<std::string> header) {
  for (auto& h : header) {
    right_.push_back(!h.empty() && h[0] == '>');
    header_.push_back(right_.back() ? h.substr(1) : h);
  }
}

void TextTable::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

std::string TextTable::str() const {
  std::vector<std::size_t> width(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - cells[c].size(), ' ');
      out += right_[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
      if (c + 1 < cells.size()) out += "  ";
    }
    return out + "\n";
  };
  std::string out = line(header_);
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "never";
  return fixed(100 * fraction, fraction < 0.1 ? 1 : 0) + "%";
}

}  // namespace nubo_cost
