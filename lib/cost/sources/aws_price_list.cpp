// The AWS Price List's EC2 offer file in CSV (pricing.us-east-1.amazonaws.com/offers/v1.0/aws/
// AmazonEC2/current/<region>/index.csv): five lines of preamble, then one line per SKU, term and
// price dimension. Reserved terms give the published reserved prices: Linux, shared tenancy, no
// pre-installed software, standard offering class. An upfront fee is its own "Quantity" line;
// it is spread over the term's hours and added to the hourly rate, and of the purchase options
// (no, partial, all upfront) the cheapest effective rate is kept.
#include <algorithm>
#include <map>

#include "common/csv.hpp"
#include "common/text.hpp"
#include "cost/sources/source.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

constexpr double kHoursPerYear = 8760;

const std::vector<std::string> kRequired = {
    "TermType",      "Unit",          "PricePerUnit", "LeaseContractLength", "PurchaseOption",
    "OfferingClass", "Instance Type", "Tenancy",      "Operating System",    "Pre Installed S/W",
    "Region Code"};

}  // namespace

// The lines worth keeping of a regional offer file of hundreds of megabytes: the header, and
// the reserved terms of GPU instances for Linux on shared tenancy.
bool aws_price_list_keep_line(std::string_view line) {
  if (line.starts_with("\"SKU\"")) return true;
  for (std::string_view needed : {"\"Reserved\"", "\"GPU instance\"", "\"Linux\"", "\"Shared\""})
    if (line.find(needed) == std::string_view::npos) return false;
  return true;
}

Imported read_aws_price_list(const Input& in) {
  Imported out;
  // The table starts at the header line, after the preamble.
  const auto header = in.text.find("\"SKU\"");
  if (header == std::string_view::npos)
    throw Error(Errc::invalid_argument,
                in.where + ": not an AWS price list CSV: no header line starting with \"SKU\"");
  std::size_t first_line = 1;
  for (std::size_t i = 0; i < header; ++i) first_line += in.text[i] == '\n';
  std::vector<csv::BadLine> bad;
  const auto table = csv::Table::parse(in.text.substr(header), in.where, kRequired, &bad);
  auto where_of = [&](std::size_t line) {
    return in.where + ":" + std::to_string(line + first_line - 1);
  };
  for (auto& b : bad) out.skipped.push_back({where_of(b.line), b.reason});
  out.records = bad.size();

  // (instance, region, lease, purchase option) -> effective $/h, and where it was read.
  struct Option {
    double hourly = 0;
    std::string where;
  };
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Option> options;
  for (const auto& row : table.rows()) {
    if (row.str("TermType") != "Reserved") continue;
    if (row.str("Operating System") != "Linux" || row.str("Tenancy") != "Shared" ||
        row.str("Pre Installed S/W") != "NA" || row.str("OfferingClass") != "standard")
      continue;
    if (const auto cap = row.optional("CapacityStatus"); !cap.empty() && cap != "Used") continue;
    ++out.records;
    const auto where = where_of(row.line());
    const auto& lease = row.str("LeaseContractLength");
    const double years = lease == "1yr" ? 1 : lease == "3yr" ? 3 : 0;
    const auto& unit = row.str("Unit");
    double price = -1;
    try {
      price = text::parse_double(row.str("PricePerUnit"), "PricePerUnit", 0, 1e9);
    } catch (const Error& e) {
      out.skipped.push_back({where, e.what()});
      continue;
    }
    if (years == 0 || (unit != "Hrs" && unit != "Quantity")) {
      out.skipped.push_back({where, row.str("Instance Type") + ": lease '" + lease + "', unit '" +
                                        unit + "' is not a 1yr or 3yr hourly or upfront price"});
      continue;
    }
    auto& o = options[{row.str("Instance Type"), row.str("Region Code"), lease,
                       row.str("PurchaseOption")}];
    o.hourly += unit == "Hrs" ? price : price / (years * kHoursPerYear);
    if (o.where.empty()) o.where = where;
  }
  // The cheapest purchase option of each term.
  std::map<std::tuple<std::string, std::string, std::string>, Option> best;
  for (const auto& [key, o] : options) {
    auto [it, fresh] =
        best.emplace(std::tuple{std::get<0>(key), std::get<1>(key), std::get<2>(key)}, o);
    if (!fresh && o.hourly < it->second.hourly) it->second = o;
  }
  for (const auto& [key, o] : best) {
    if (!(o.hourly > 0)) {
      out.skipped.push_back({o.where, std::get<0>(key) + ": reserved price of zero"});
      continue;
    }
    out.reserved.push_back({"aws", std::get<0>(key), std::get<1>(key),
                            std::get<2>(key) == "1yr" ? Pricing::reserved_1y : Pricing::reserved_3y,
                            o.hourly, o.where});
  }
  return out;
}

}  // namespace nubo::cost::sources
