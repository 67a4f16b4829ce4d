// nubo-cost schedule: a queue of jobs over reservations, on-demand and spot (docs/schedule.md).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "catalog_load.hpp"
#include "commands.hpp"
#include "flag_values.hpp"
#include "nubo/error.hpp"
#include "nubo/schedule.hpp"
#include "nubo/units.hpp"
#include "text_table.hpp"

namespace nubo_cost {
namespace {

using namespace nubo::cost;

constexpr int kExitUnplaced = 3;

std::string hours(double h) {
  return fixed(h, 1) + " h";
}

// A fleet row as runs of equal counts: "0-35 h: 2, 35-80 h: 1".
std::string runs(const FleetRow& row, double slot_h) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t i = 1; i <= row.count.size(); ++i) {
    if (i < row.count.size() && row.count[i] == row.count[from]) continue;
    if (row.count[from] > 0) {
      if (!out.empty()) out += ", ";
      out += fixed(static_cast<double>(from) * slot_h, 0) + "-" +
             fixed(static_cast<double>(i) * slot_h, 0) + " h: " + std::to_string(row.count[from]);
    }
    from = i;
  }
  return out.empty() ? "none" : out;
}

void print(const Schedule& s, const Queue& q) {
  std::cout << "Schedule: " << q.jobs.size() << " jobs, " << q.reservations.size()
            << " reservations, " << hours(s.horizon_h) << " in " << fixed(s.slot_h, 0)
            << " h slots; " << schedule_method_name(s.method)
            << (s.optimal ? ", optimal" : ", within " + percent(s.gap) + " of the best possible")
            << ", solved in " << nubo::format_duration(s.solve_s) << "\n\n";
  TextTable t(
      {"job", "placement", "where", ">start", ">end", ">deadline", ">cost", "why not cheapest"});
  for (const auto& j : s.jobs) {
    const bool placed = j.placement != Placement::unplaced;
    t.add({j.name, std::string(placement_name(j.placement)),
           placed ? j.estimate.instance + " x" + std::to_string(j.estimate.nodes) + " " +
                        j.estimate.region
                  : "",
           hours(j.start_h), placed ? hours(j.finish_h) : "", hours(j.deadline_h),
           placed ? format_money(j.cost) : "", j.reason});
  }
  std::cout << t.str() << "\nFleet (instances running):\n";
  for (const auto& f : s.fleet) std::cout << "  " << f.kind << ": " << runs(f, s.slot_h) << "\n";
  const auto& c = s.costs;
  std::cout << "\nCost: " << format_money(c.total()) << " = committed "
            << format_money(c.committed_used + c.committed_idle) << " (used "
            << format_money(c.committed_used) << ", idle " << format_money(c.committed_idle)
            << ") + on-demand " << format_money(c.on_demand) << " + spot " << format_money(c.spot)
            << "\n";
  if (!c.by_tag.empty()) {
    std::cout << "By tag:";
    for (const auto& [tag, dollars] : c.by_tag)
      std::cout << " " << (tag.empty() ? "(none)" : tag) << " " << format_money(dollars) << ";";
    std::cout << "\n";
  }
  for (const auto& n : s.notes) std::cout << "Note: " << n << "\n";
}

}  // namespace

int run(const ScheduleCommand& c) {
  const auto catalog = load_catalog(c.catalog);
  auto queue = load_queue(c.queue);
  ScheduleOptions o;
  o.method = parse_schedule_method(c.method);
  o.time_limit_s = nubo::parse_duration(c.time_limit, "--time-limit");
  if (o.time_limit_s <= 0) bad("--time-limit: must be longer than 0");
  if (!c.slot.empty()) o.slot_h = nubo::parse_duration(c.slot, "--slot") / 3600;
  if (!c.mtbi.empty()) o.request.spot_mtbi_s = nubo::parse_duration(c.mtbi, "--mtbi");
  if (!c.restart.empty()) o.request.restart_s = nubo::parse_duration(c.restart, "--restart");
  if (!c.emit.empty()) parse_job_file_format(c.emit[0]);  // refused before the work
  std::vector<Reservation> more;
  for (const auto& spec : c.reserve) more.push_back(parse_reservation(spec));

  auto s = schedule(catalog, queue, o);
  if (!c.update.empty()) {
    queue = apply_updates(queue, s, load_queue_update(c.update));
    s = schedule(catalog, queue, o);
  }
  std::vector<WhatIf> ifs;
  for (const auto& r : more) ifs.push_back(what_if(catalog, queue, s, r, o));

  if (c.json) {
    auto doc = nlohmann::json::parse(s.to_json());  // nubo's own output
    for (const auto& w : ifs)
      doc["what_if"].push_back({{"reserve", w.added.instance},
                                {"region", w.added.region},
                                {"count", w.added.count},
                                {"term", pricing_name(w.added.term)},
                                {"total", w.schedule.costs.total()},
                                {"saving", w.saving}});
    std::cout << doc.dump(2) << "\n";
  } else {
    print(s, queue);
    for (const auto& w : ifs) {
      std::cout << "\nWhat if +" << w.added.count << " " << w.added.instance << " ("
                << pricing_name(w.added.term) << ", its " << hours(s.horizon_h) << " of it): total "
                << format_money(w.schedule.costs.total()) << ", "
                << (w.saving >= 0 ? "saving " + format_money(w.saving)
                                  : "costing " + format_money(-w.saving) + " more")
                << "\n";
      std::size_t moved = 0;
      for (std::size_t i = 0; i < w.schedule.jobs.size() && i < s.jobs.size(); ++i)
        moved += w.schedule.jobs[i].placement == Placement::reserved &&
                 s.jobs[i].placement != Placement::reserved;
      std::cout << "  " << moved << (moved == 1 ? " job moves" : " jobs move")
                << " onto reservations\n";
    }
  }
  if (!c.emit.empty()) {
    const auto written =
        write_job_files(catalog, s, queue, parse_job_file_format(c.emit[0]), c.emit[1]);
    std::fprintf(stderr, "nubo-cost: wrote %zu files to %s (README.md says the order)\n",
                 written.size(), c.emit[1].c_str());
  }
  return s.unplaced() > 0 ? kExitUnplaced : 0;
}

}  // namespace nubo_cost
