// A plain text table for the terminal: columns sized to their widest cell, numbers right-aligned.
#pragma once

#include <string>
#include <vector>

namespace nubo_cost {

class TextTable {
 public:
  // A header cell starting with '>' is right-aligned (the '>' is not printed).
  explicit TextTable(std::vector<std::string> header);
  void add(std::vector<std::string> row);
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

std::string fixed(double v, int decimals);  // "12.35"
std::string percent(double fraction);       // "37%"

}  // namespace nubo_cost
