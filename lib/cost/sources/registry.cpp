#include <map>

#include "common/text.hpp"
#include "cost/sources/checks.hpp"
#include "cost/sources/source.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

// Every format a catalog source can be in: a new one is a file with its reader and a row here.
const std::map<std::string, Format, std::less<>>& formats() {
  static const std::map<std::string, Format, std::less<>> table = {
      {"skypilot", {read_skypilot}},
      {"gpuhunt", {read_gpuhunt}},
      {"spot-advisor", {read_spot_advisor}},
      {"aws-price-list", {read_aws_price_list, aws_price_list_keep_line}},
      {"azure-retail", {read_azure_retail, nullptr, azure_next_page, azure_join_pages}},
  };
  return table;
}

}  // namespace

std::string known_formats() {
  std::vector<std::string> names;
  for (const auto& [name, r] : formats()) names.push_back(name);
  return text::join(names, ", ");
}

const Format& format(std::string_view name) {
  auto it = formats().find(name);
  if (it == formats().end())
    throw Error(Errc::invalid_argument,
                "unknown catalog format '" + std::string(name) + "'; known: " + known_formats());
  return it->second;
}

Imported read(const Format& format, const Input& in) {
  auto got = format.read(in);
  check_rows(got);
  return got;
}

}  // namespace nubo::cost::sources
