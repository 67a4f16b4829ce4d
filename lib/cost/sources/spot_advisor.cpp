// The AWS Spot Instance Advisor's data file (spot-advisor-data.json): per region, operating
// system and instance type, the savings over on-demand ("s") and an index ("r") into `ranges`,
// the bands of interruption frequency ("<5%", "5-10%", ... ">20%").
//
// A band becomes a mean time between interruptions (docs/cost.md, "Interruption bands"). AWS
// defines it as the share of the type's spot capacity reclaimed over the trailing month: of the
// instances that ran, that share ended in an interruption. Spot instances live far less than a
// month, so the share is read over an instance's life, assumed kLifetimeHours, with
// interruptions a Poisson process: MTBI = -lifetime / ln(1 - p). p is the band's upper bound, not
// its middle, because a plan should not be rosier than the data; the open band (">20%") is read
// as one more band of the same width (25%), so the figures fall smoothly from band to band.
#include <algorithm>
#include <cmath>

#include "common/json.hpp"
#include "common/text.hpp"
#include "cost/sources/source.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

// The life of a spot instance over which AWS's share is read: a day. Read over a whole month
// (730 h) instead, AWS's "fewer than 5%" would mean one interruption every 1.6 years per
// instance, far from what users of GPU spot capacity see; --mtbi replaces it with a measured
// figure.
constexpr double kLifetimeHours = 24;
constexpr double kBandWidth = 0.05;  // "<5%", "5-10%", ... "15-20%": each five points wide

// The band's upper bound as a fraction (an open band's: one band width above its floor); -1 when
// the label is not a band.
double upper_bound(const std::string& label) {
  auto s = text::trim(label);
  if (s.empty() || s.back() != '%') return -1;
  s.remove_suffix(1);
  const bool open = s.starts_with('>');
  if (open || s.starts_with('<')) s.remove_prefix(1);
  if (auto dash = s.find('-'); dash != std::string_view::npos) s = s.substr(dash + 1);
  try {
    const double bound = text::parse_double(text::trim(s), "band", 0.1, 99.9) / 100;
    return open ? std::min(bound + kBandWidth, 0.999) : bound;
  } catch (const Error&) {
    return -1;
  }
}

}  // namespace

double band_mtbi_h(const std::string& label) {
  const double p = upper_bound(label);
  return p > 0 ? -kLifetimeHours / std::log1p(-p) : 0;
}

Imported read_spot_advisor(const Input& in) {
  Imported out;
  const auto doc = json::parse(in.text, in.where);
  auto fail = [&](const std::string& why) {
    throw Error(Errc::invalid_argument, in.where + ": " + why);
  };
  if (!doc.is_object() || !doc.contains("ranges") || !doc.contains("spot_advisor"))
    fail("not a Spot Advisor file: expected an object with \"ranges\" and \"spot_advisor\"");
  const auto& ranges = doc["ranges"];
  const auto& regions = doc["spot_advisor"];
  if (!ranges.is_array() || !regions.is_object())
    fail("\"ranges\" must be an array and \"spot_advisor\" an object");
  std::vector<std::string> labels(ranges.size());
  for (const auto& r : ranges) {
    if (!r.is_object() || !r.contains("index") || !r["index"].is_number_unsigned() ||
        !r.contains("label") || !r["label"].is_string())
      fail("each range needs an \"index\" and a \"label\"");
    const auto i = r["index"].get<std::size_t>();
    const auto label = r["label"].get<std::string>();
    if (i >= labels.size() || upper_bound(label) < 0)
      fail("range " + std::to_string(i) + " '" + label + "' is not an interruption band");
    labels[i] = label;
  }
  for (auto region = regions.begin(); region != regions.end(); ++region) {
    if (!region.value().is_object()) continue;
    auto os = region.value().find("Linux");
    if (os == region.value().end() || !os->is_object()) continue;
    for (auto type = os->begin(); type != os->end(); ++type) {
      ++out.records;
      const std::string where = in.where + ": " + region.key() + " " + type.key();
      const auto& v = type.value();
      if (!v.is_object() || !v.contains("r") || !v["r"].is_number_unsigned() ||
          v["r"].get<std::size_t>() >= labels.size()) {
        out.skipped.push_back({where, type.key() + ": no valid range index \"r\""});
        continue;
      }
      const auto& label = labels[v["r"].get<std::size_t>()];
      out.bands.push_back({"aws", type.key(), region.key(), label, band_mtbi_h(label), where});
    }
  }
  return out;
}

}  // namespace nubo::cost::sources
