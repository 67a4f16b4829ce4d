// Azure's Retail Prices API (prices.azure.com/api/retail/prices): {"Items": [...],
// "NextPageLink": ...}. Its Reservation items give the published reserved prices: unitPrice is
// the whole term's price (though unitOfMeasure says "1 Hour"), spread here over the term's hours.
#include "common/json.hpp"
#include "common/text.hpp"
#include "cost/sources/source.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

constexpr double kHoursPerYear = 8760;

std::string text_of(const nlohmann::json& item, const char* key) {
  auto it = item.find(key);
  return it != item.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string azure_next_page(std::string_view body) {
  try {
    const auto doc = json::parse(body, "Azure Retail Prices page");
    if (auto it = doc.find("NextPageLink"); doc.is_object() && it != doc.end() && it->is_string())
      return it->get<std::string>();
  } catch (const Error&) {
    // A page that is not JSON has no next page; reading it reports the problem.
  }
  return {};
}

std::string azure_join_pages(const std::vector<std::string>& pages) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& page : pages) {
    const auto doc = json::parse(page, "Azure Retail Prices page");
    if (!doc.is_object() || !doc.contains("Items") || !doc["Items"].is_array())
      throw Error(
          Errc::invalid_argument,
          "Azure Retail Prices page: not an answer of the API: expected {\"Items\": [...]}");
    for (const auto& item : doc["Items"]) items.push_back(item);
  }
  return nlohmann::json{{"Items", items}, {"NextPageLink", nullptr}}.dump();
}

Imported read_azure_retail(const Input& in) {
  Imported out;
  const auto doc = json::parse(in.text, in.where);
  if (!doc.is_object() || !doc.contains("Items") || !doc["Items"].is_array())
    throw Error(Errc::invalid_argument,
                in.where + ": not a Retail Prices API answer: expected {\"Items\": [...]}");
  const auto& items = doc["Items"];
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    const std::string where = in.where + ": Items[" + std::to_string(i) + "]";
    if (!item.is_object() || text_of(item, "type") != "Reservation") continue;
    ++out.records;
    const auto sku = text_of(item, "armSkuName"), region = text_of(item, "armRegionName");
    const auto term = text_of(item, "reservationTerm");
    auto price = item.find("unitPrice");
    if (sku.empty() || region.empty()) {
      out.skipped.push_back({where, "no armSkuName or armRegionName"});
      continue;
    }
    if (term != "1 Year" && term != "1 Years" && term != "3 Years") {
      out.skipped.push_back({where, sku + ": reservationTerm '" + term + "' is not 1 or 3 years"});
      continue;
    }
    if (price == item.end() || !price->is_number() || !(price->get<double>() > 0)) {
      out.skipped.push_back({where, sku + ": unitPrice is not a positive number"});
      continue;
    }
    const bool three = term == "3 Years";
    out.reserved.push_back({"azure", sku, region,
                            three ? Pricing::reserved_3y : Pricing::reserved_1y,
                            price->get<double>() / ((three ? 3 : 1) * kHoursPerYear), where});
  }
  return out;
}

}  // namespace nubo::cost::sources
