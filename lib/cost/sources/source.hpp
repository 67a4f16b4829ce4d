// A catalog source reads one public format (SkyPilot's vms.csv, gpuhunt's CSV, the AWS Spot
// Advisor file, AWS's and Azure's price lists) into what the catalog keeps: instance rows,
// published reserved prices and interruption bands. Every source is lenient: a row it cannot
// use is skipped with its file, line and reason, never dropped silently; the checks every row
// passes afterwards (checks.hpp) are the same whatever its format.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nubo/cost.hpp"

namespace nubo::cost::sources {

// A reserved price a provider publishes, for one instance in one region.
struct ReservedPrice {
  std::string provider, instance, region;
  Pricing term = Pricing::reserved_1y;
  double hourly = 0;  // effective $/h over the term, upfront fees spread over its hours
  std::string where;  // "aws_reserved.csv:12"
};

// A provider's published interruption frequency for one instance in one region.
struct InterruptionBand {
  std::string provider, instance, region;
  std::string band;  // "<5%", "5-10%", ...
  double mtbi_h = 0;
  std::string where;
};

// What one file of a source gave.
struct Imported {
  std::vector<Instance> instances;  // one per (instance, region); zones collapsed
  std::vector<ReservedPrice> reserved;
  std::vector<InterruptionBand> bands;
  std::vector<SkippedRow> skipped;
  std::vector<SkippedRow> corrected;  // rows kept with a fact in place of what the source said
  std::size_t records = 0;            // records read, used or skipped
};

// Which file is read: its name in messages ("skypilot/aws.csv"), the provider it prices (a
// SkyPilot file names none of its own), and the date its rows carry.
struct Input {
  std::string_view text;
  std::string where;
  std::string provider;
  std::string date;  // YYYY-MM-DD
};

using Reader = Imported (*)(const Input&);

struct Format {
  Reader read = nullptr;
  // For a format whose files are far larger than what nubo reads of them (the AWS price list),
  // the lines an update keeps as they arrive; nullptr: the whole body.
  bool (*keep_line)(std::string_view line) = nullptr;
  // The URL of the next page of an answer (the Azure Retail Prices API pages its answers); ""
  // when it is the last, or the format has no pages.
  std::string (*next_page)(std::string_view body) = nullptr;
  // Pages joined into one document of the format.
  std::string (*join_pages)(const std::vector<std::string>& pages) = nullptr;
};

// A format: "skypilot", "gpuhunt", "spot-advisor", "aws-price-list", "azure-retail"; throws
// invalid_argument naming the known formats.
const Format& format(std::string_view name);
// `in` read by its format's reader, then checked (checks.hpp: check_rows): the one way rows of
// a source enter, whether an update fetched them or a catalog loads them.
Imported read(const Format& format, const Input& in);
std::string known_formats();

bool aws_price_list_keep_line(std::string_view line);
std::string azure_next_page(std::string_view body);
std::string azure_join_pages(const std::vector<std::string>& pages);

// A Spot Advisor band's mean time between interruptions of one instance, hours; 0 for a label
// that is no band (spot_advisor.cpp derives it).
double band_mtbi_h(const std::string& label);

// One reader per file (skypilot.cpp, gpuhunt.cpp, ...).
Imported read_skypilot(const Input& in);
Imported read_gpuhunt(const Input& in);
Imported read_spot_advisor(const Input& in);
Imported read_aws_price_list(const Input& in);
Imported read_azure_retail(const Input& in);

}  // namespace nubo::cost::sources
