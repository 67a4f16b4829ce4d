#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace nubo_cost {
namespace {

constexpr double kW = 960, kH = 600;                                 // canvas
constexpr double kLeft = 90, kRight = 300, kTop = 60, kBottom = 70;  // plot margins
constexpr double kPlotW = kW - kLeft - kRight, kPlotH = kH - kTop - kBottom;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

const char* colour(nubo::cost::Pricing p) {
  switch (p) {
    case nubo::cost::Pricing::on_demand:
      return "#1f77b4";
    case nubo::cost::Pricing::spot:
      return "#ff7f0e";
    case nubo::cost::Pricing::reserved_1y:
      return "#2ca02c";
    case nubo::cost::Pricing::reserved_3y:
      return "#9467bd";
  }
  return "#777";
}

// A log axis over [lo, hi], widened to whole decades' 1-2-5 ticks.
struct LogAxis {
  double lo, hi;
  LogAxis(double min, double max) {
    if (!(min > 0)) min = 1e-3;
    if (!(max > min)) max = min * 10;
    lo = std::pow(10, std::floor(std::log10(min)));
    hi = std::pow(10, std::ceil(std::log10(max)));
    if (hi / lo < 10) hi = lo * 10;
  }
  double frac(double v) const {
    return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    const bool dense = hi / lo <= 1e3;
    for (double d = lo; d <= hi * 1.0001; d *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if ((m == 1.0 || dense) && d * m <= hi * 1.0001) t.push_back(d * m);
    return t;
  }
};

std::string trimmed(double v) {
  // "5" rather than "5.0", but "1.5" stays.
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v - std::round(v)) < 1e-9 ? "%.0f" : "%.1f", v);
  return buf;
}

std::string hours_label(double h) {
  if (h < 1.0 / 60) return trimmed(std::round(h * 3600)) + " s";
  if (h < 1) return trimmed(std::round(h * 60)) + " min";
  if (h < 48) return trimmed(h < 10 ? std::round(h * 10) / 10 : std::round(h)) + " h";
  return trimmed(h / 24 < 10 ? std::round(h / 2.4) / 10 : std::round(h / 24)) + " d";
}

std::string money_label(double c) {
  // snprintf rather than "$" + string: gcc 12 warns falsely (-Wrestrict) on the latter.
  char buf[48];
  if (c < 10)
    std::snprintf(buf, sizeof buf, "$%s", trimmed(std::round(c * 10) / 10).c_str());
  else if (c < 1e4)
    std::snprintf(buf, sizeof buf, "$%s", trimmed(std::round(c)).c_str());
  else if (c < 1e6)
    std::snprintf(buf, sizeof buf, "$%sk", trimmed(std::round(c / 1e3)).c_str());
  else
    std::snprintf(buf, sizeof buf, "$%sM", trimmed(std::round(c / 1e5) / 10).c_str());
  return buf;
}

}  // namespace

std::string plan_svg(const ChartInput& in) {
  double tmin = 1e300, tmax = 0, cmin = 1e300, cmax = 0;
  for (const auto& e : in.plans) {
    tmin = std::min(tmin, e.hours());
    tmax = std::max(tmax, e.hours());
    cmin = std::min(cmin, e.total_cost());
    cmax = std::max(cmax, e.total_cost());
  }
  if (in.deadline_s > 0) tmax = std::max(tmax, in.deadline_s / 3600 * 1.05);
  if (in.budget > 0) cmax = std::max(cmax, in.budget * 1.05);
  LogAxis x(tmin, tmax), y(cmin, cmax);
  auto px = [&](double h) { return kLeft + x.frac(h) * kPlotW; };
  auto py = [&](double c) { return kTop + (1 - y.frac(c)) * kPlotH; };

  std::string s;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kW) + "\" height=\"" + num(kH) +
       "\" viewBox=\"0 0 " + num(kW) + " " + num(kH) +
       "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(kLeft) + "\" y=\"30\" font-size=\"18\" font-weight=\"bold\">" +
       escape(in.title) + "</text>\n";
  s += "<text x=\"" + num(kLeft) + "\" y=\"48\" font-size=\"12\" fill=\"#555\">" +
       std::to_string(in.plans.size()) +
       " feasible plans; lower left is better; the red line is the Pareto frontier</text>\n";

  // Grid and axes.
  s += "<g font-size=\"11\" fill=\"#444\">\n";
  for (double t : x.ticks()) {
    s += "<line x1=\"" + num(px(t)) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(px(t)) +
         "\" y2=\"" + num(kTop + kPlotH) + "\" stroke=\"#e5e5e5\"/>\n";
    s += "<text x=\"" + num(px(t)) + "\" y=\"" + num(kTop + kPlotH + 18) +
         "\" text-anchor=\"middle\">" + hours_label(t) + "</text>\n";
  }
  for (double c : y.ticks()) {
    s += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(py(c)) + "\" x2=\"" + num(kLeft + kPlotW) +
         "\" y2=\"" + num(py(c)) + "\" stroke=\"#e5e5e5\"/>\n";
    s += "<text x=\"" + num(kLeft - 8) + "\" y=\"" + num(py(c) + 4) + "\" text-anchor=\"end\">" +
         money_label(c) + "</text>\n";
  }
  s += "</g>\n";
  s += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(kPlotW) +
       "\" height=\"" + num(kPlotH) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  s += "<text x=\"" + num(kLeft + kPlotW / 2) + "\" y=\"" + num(kH - 22) +
       "\" font-size=\"13\" text-anchor=\"middle\">expected time to finish (log scale)</text>\n";
  s += "<text transform=\"translate(22 " + num(kTop + kPlotH / 2) +
       ") rotate(-90)\" font-size=\"13\" text-anchor=\"middle\">expected total cost (log "
       "scale)</text>\n";

  // Limits.
  if (in.deadline_s > 0) {
    double dx = px(in.deadline_s / 3600);
    s += "<line x1=\"" + num(dx) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(dx) + "\" y2=\"" +
         num(kTop + kPlotH) + "\" stroke=\"#c00\" stroke-dasharray=\"6 4\"/>\n";
    s += "<text x=\"" + num(dx - 4) + "\" y=\"" + num(kTop + 14) +
         "\" font-size=\"11\" fill=\"#c00\" text-anchor=\"end\">deadline</text>\n";
  }
  if (in.budget > 0) {
    double by = py(in.budget);
    s += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(by) + "\" x2=\"" + num(kLeft + kPlotW) +
         "\" y2=\"" + num(by) + "\" stroke=\"#c00\" stroke-dasharray=\"6 4\"/>\n";
    s += "<text x=\"" + num(kLeft + kPlotW - 4) + "\" y=\"" + num(by - 4) +
         "\" font-size=\"11\" fill=\"#c00\" text-anchor=\"end\">budget</text>\n";
  }

  // Every plan, then the frontier over them.
  s += "<g fill-opacity=\"0.55\">\n";
  for (const auto& e : in.plans)
    s += "<circle cx=\"" + num(px(e.hours())) + "\" cy=\"" + num(py(e.total_cost())) +
         "\" r=\"4\" fill=\"" + colour(e.pricing) + "\"><title>" + escape(e.label()) + " (" +
         escape(e.region) + "): " + hours_label(e.hours()) + ", " + money_label(e.total_cost()) +
         "</title></circle>\n";
  s += "</g>\n";
  if (!in.frontier.empty()) {
    // A staircase: from each frontier plan, as fast as it, down to the next cheaper one.
    std::string d;
    for (std::size_t i = 0; i < in.frontier.size(); ++i) {
      const auto& e = in.frontier[i];
      d += (i ? " H " + num(px(e.hours())) + " V " : "M " + num(px(e.hours())) + " ") +
           num(py(e.total_cost()));
    }
    s += "<path d=\"" + d + "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>\n";
    for (const auto& e : in.frontier)
      s += "<circle cx=\"" + num(px(e.hours())) + "\" cy=\"" + num(py(e.total_cost())) +
           "\" r=\"5.5\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\"/>\n";
  }

  // The best three: numbered on the chart, named in the panel.
  for (std::size_t i = 0; i < in.best.size(); ++i) {
    const auto& e = in.best[i];
    const double cx = px(e.hours()), cy = py(e.total_cost());
    const double ox = cx + 14 + 12 * static_cast<double>(i),
                 oy = cy - 16 - 14 * static_cast<double>(i);
    s += "<line x1=\"" + num(cx) + "\" y1=\"" + num(cy) + "\" x2=\"" + num(ox) + "\" y2=\"" +
         num(oy) + "\" stroke=\"#222\"/>\n";
    s += "<circle cx=\"" + num(ox) + "\" cy=\"" + num(oy) + "\" r=\"9\" fill=\"#222\"/><text x=\"" +
         num(ox) + "\" y=\"" + num(oy + 4) +
         "\" font-size=\"11\" font-weight=\"bold\" fill=\"white\" text-anchor=\"middle\">" +
         std::to_string(i + 1) + "</text>\n";
  }
  const double panel = kLeft + kPlotW + 20;
  double ly = kTop + 8;
  s += "<text x=\"" + num(panel) + "\" y=\"" + num(ly) +
       "\" font-size=\"13\" font-weight=\"bold\">" + "Best by " + escape(in.rank) + "</text>\n";
  ly += 22;
  for (std::size_t i = 0; i < in.best.size(); ++i) {
    const auto& e = in.best[i];
    s += "<circle cx=\"" + num(panel + 9) + "\" cy=\"" + num(ly - 4) +
         "\" r=\"9\" fill=\"#222\"/><text x=\"" + num(panel + 9) + "\" y=\"" + num(ly) +
         "\" font-size=\"11\" font-weight=\"bold\" fill=\"white\" text-anchor=\"middle\">" +
         std::to_string(i + 1) + "</text>\n";
    s += "<text x=\"" + num(panel + 24) + "\" y=\"" + num(ly) + "\" font-size=\"12\">" +
         escape(e.instance + " x" + std::to_string(e.nodes)) + "</text>\n";
    s += "<text x=\"" + num(panel + 24) + "\" y=\"" + num(ly + 15) +
         "\" font-size=\"11\" fill=\"#555\">" + escape(std::string(pricing_name(e.pricing))) +
         ", " + escape(e.region) + "</text>\n";
    s += "<text x=\"" + num(panel + 24) + "\" y=\"" + num(ly + 30) +
         "\" font-size=\"11\" fill=\"#555\">" + hours_label(e.hours()) + ", " +
         escape(nubo::cost::format_money(e.total_cost())) + "</text>\n";
    ly += 50;
  }
  // Legend.
  ly += 10;
  s += "<text x=\"" + num(panel) + "\" y=\"" + num(ly) +
       "\" font-size=\"13\" font-weight=\"bold\">Pricing</text>\n";
  ly += 20;
  for (auto p : {nubo::cost::Pricing::on_demand, nubo::cost::Pricing::spot,
                 nubo::cost::Pricing::reserved_1y, nubo::cost::Pricing::reserved_3y}) {
    bool used = false;
    for (const auto& e : in.plans) used = used || e.pricing == p;
    if (!used) continue;
    s += "<circle cx=\"" + num(panel + 9) + "\" cy=\"" + num(ly - 4) + "\" r=\"5\" fill=\"" +
         colour(p) + "\"/><text x=\"" + num(panel + 24) + "\" y=\"" + num(ly) +
         "\" font-size=\"12\">" + std::string(pricing_name(p)) + "</text>\n";
    ly += 18;
  }
  s += "<path d=\"M " + num(panel) + " " + num(ly - 4) + " H " + num(panel + 18) +
       "\" stroke=\"#d62728\" stroke-width=\"2\"/><text x=\"" + num(panel + 24) + "\" y=\"" +
       num(ly) + "\" font-size=\"12\">Pareto frontier</text>\n";
  s += "</svg>\n";
  return s;
}

}  // namespace nubo_cost
