// A solved model as the schedule people read: each job's place, times, cost and, when it is not
// on its cheapest option, why; the fleet per slot; the costs split by kind and tag.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/text.hpp"
#include "cost/schedule/schedule_model.hpp"

namespace nubo::cost::schedule_detail {
namespace {

std::string hours_text(double h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f h", h);
  return buf;
}

std::string offer_text(const Estimate& e) {
  return e.label() + " in " + e.region + " (" + format_money(e.total_cost()) + ", " +
         hours_text(e.hours()) + ")";
}

// The jobs placed on each pool, indexed once: a reason names who holds a pool without a scan of
// every job for every job (which took a queue of 100,000 jobs 10^10 steps).
using OnPool = std::vector<std::vector<std::size_t>>;
OnPool jobs_on_pools(const Model& m, const std::vector<Choice>& choices) {
  OnPool out(m.pools.size());
  for (std::size_t j = 0; j < choices.size(); ++j)
    if (choices[j].kind == Choice::reserved)
      out[m.jobs[j].reserved[choices[j].way].pool].push_back(j);
  return out;
}

// The jobs on a pool during [from, to): who took the reservation when this job could have run.
std::string holders(const Model& m, const Queue& q, const std::vector<Choice>& choices,
                    const OnPool& on_pool, std::size_t pool, int from, int to, std::size_t except) {
  std::vector<std::string> names;
  for (const std::size_t j : on_pool[pool]) {
    const auto& c = choices[j];
    if (j == except) continue;
    const auto& way = m.jobs[j].reserved[c.way];
    if (c.start >= to || c.start + way.slots <= from) continue;
    names.push_back(q.jobs[j].name);
  }
  for (const auto& h : q.held)
    if (h.reservation == m.pools[pool].reservation) names.push_back(h.job + " (running)");
  if (names.size() > 4) {
    const auto more = names.size() - 3;
    names.resize(3);
    names.push_back(std::to_string(more) + " more");
  }
  return names.empty() ? std::string("nothing (their windows are too short)")
                       : text::join(names, ", ");
}

std::string reason_for(const Model& m, const Queue& q, const std::vector<Choice>& choices,
                       const OnPool& on_pool, std::size_t j) {
  const auto& w = m.jobs[j];
  const auto& c = choices[j];
  if (c.kind == Choice::reserved) return {};
  const std::string deadline = "its deadline at " + hours_text(w.deadline_h);
  if (c.kind == Choice::none) {
    if (w.deadline_h <= w.release_h) return "deadline: " + deadline + " has passed";
    if (!w.reserved.empty()) {
      const auto& way = w.reserved.front();
      return "capacity: only the reservations finish it by " + deadline + ", and " +
             holders(m, q, choices, on_pool, way.pool, way.first, way.last + way.slots, j) +
             " hold them then";
    }
    if (w.fastest)
      return "deadline: nothing finishes by " + deadline + "; the fastest, " +
             offer_text(*w.fastest) + ", ends at " + hours_text(w.release_h + w.fastest->hours());
    return "no offer can run it" + (w.excluded.empty()
                                        ? std::string(" (no offer matches its filters)")
                                        : "; e.g. " + w.excluded);
  }
  // On the cloud: was a reservation, or a cheaper offer, possible?
  if (!w.reserved.empty()) {
    const auto& way = w.reserved.front();
    return "capacity: the " + m.pools[way.pool].instance->name + " reservation is taken by " +
           holders(m, q, choices, on_pool, way.pool, way.first, way.last + way.slots, j) +
           " while it could run there";
  }
  const auto& chosen = *w.cloud;
  if (w.cheapest && w.cheapest->total_cost() < chosen.total_cost() - 0.005) {
    const auto& cheap = *w.cheapest;
    std::string why = "deadline: the cheapest, " + offer_text(cheap) + ", ends at " +
                      hours_text(w.release_h + cheap.hours()) + ", after " + deadline;
    if (cheap.pricing == Pricing::spot && cheap.time.rework_s + cheap.time.restart_s > 0)
      why += " (" + hours_text((cheap.time.rework_s + cheap.time.restart_s) / 3600) +
             " of it expected rework and restarts at its interruption rate)";
    return why;
  }
  // Interruptible, yet on demand: a spot offer cheaper by the hour loses on its rework.
  if (w.spot && chosen.pricing != Pricing::spot && w.spot->hourly < chosen.hourly &&
      w.spot->total_cost() >= chosen.total_cost())
    return "interruption rate: spot's expected rework (" +
           hours_text((w.spot->time.rework_s + w.spot->time.restart_s) / 3600) + " on " +
           w.spot->label() + ", interrupted every " + hours_text(w.spot->spot_mtbi_s / 3600) +
           ") makes it cost " + format_money(w.spot->total_cost()) + ", more than on demand";
  if (!w.spot && !w.spot_excluded.empty() && chosen.pricing != Pricing::spot)
    return "interruption rate: not on spot, where " + w.spot_excluded;
  return {};
}

// The grid's slots [from, to) of a run; clamped in double before any int: a cloud job's hours
// (and a held reservation's end) have no bound of their own.
std::pair<int, int> slots_of(const Model& m, double start_h, double hours) {
  const auto clamp = [&](double v) {
    return static_cast<int>(std::clamp(v, 0.0, static_cast<double>(m.slots)));
  };
  const int from = clamp(std::floor(start_h / m.slot_h + 1e-9));
  const int to = clamp(std::ceil((start_h + hours) / m.slot_h - 1e-9));
  return {from, std::clamp(std::max(to, from + 1), 0, m.slots)};
}

}  // namespace

Schedule assemble(const Model& m, const Queue& q, const Solved& solved) {
  Schedule s;
  s.slot_h = m.slot_h;
  s.horizon_h = m.horizon_h;
  s.optimal = solved.optimal;
  s.notes = m.notes;
  std::map<std::string, std::vector<int>> fleet;
  const auto run = [&](const std::string& kind, int from, int to, int nodes) {
    auto& row = fleet[kind];
    row.resize(static_cast<std::size_t>(m.slots), 0);
    for (int t = from; t < to; ++t) row[static_cast<std::size_t>(t)] += nodes;
  };
  std::vector<double> used_hours(m.pools.size(), 0);
  const auto on_pool = jobs_on_pools(m, solved.choices);
  for (std::size_t j = 0; j < q.jobs.size(); ++j) {
    const auto& job = q.jobs[j];
    const auto& w = m.jobs[j];
    const auto& c = solved.choices[j];
    ScheduledJob out;
    out.name = job.name;
    out.tag = job.tag;
    out.deadline_h = w.deadline_h;
    out.reason = reason_for(m, q, solved.choices, on_pool, j);
    if (c.kind == Choice::reserved) {
      const auto& way = w.reserved[c.way];
      const auto& pool = m.pools[way.pool];
      out.placement = Placement::reserved;
      out.reservation = pool.reservation;
      out.estimate = way.estimate;
      out.estimate.pricing = q.reservations[pool.reservation].term;
      out.start_h = c.start * m.slot_h;
      out.finish_h = out.start_h + way.estimate.hours();
      run(pool.instance->name + " " + pool.instance->region + " reserved", c.start,
          c.start + way.slots, way.nodes);
      const double hours = way.slots * m.slot_h * way.nodes;
      used_hours[way.pool] += hours;
      if (!job.tag.empty()) s.costs.by_tag[job.tag] += hours * pool.hourly;
    } else if (c.kind == Choice::cloud) {
      out.estimate = *w.cloud;
      out.placement = w.cloud->pricing == Pricing::spot ? Placement::spot : Placement::on_demand;
      out.start_h = w.release_h;
      out.finish_h = w.release_h + w.cloud->hours();
      out.cost = w.cloud->total_cost();
      (out.placement == Placement::spot ? s.costs.spot : s.costs.on_demand) += out.cost;
      s.costs.by_tag[job.tag] += out.cost;
      const auto [from, to] = slots_of(m, out.start_h, w.cloud->hours());
      run(w.cloud->instance + " " + w.cloud->region + " " +
              std::string(pricing_name(w.cloud->pricing)),
          from, to, w.cloud->nodes);
    } else {
      out.placement = Placement::unplaced;
      out.start_h = out.finish_h = w.release_h;
    }
    s.jobs.push_back(std::move(out));
  }
  // Running jobs hold their reserved nodes too.
  for (const auto& h : q.held)
    for (std::size_t p = 0; p < m.pools.size(); ++p)
      if (m.pools[p].reservation == h.reservation) {
        const auto [from, to] = slots_of(m, q.now_h, h.until_h - q.now_h);
        run(m.pools[p].instance->name + " " + m.pools[p].instance->region + " reserved", from, to,
            h.nodes);
        used_hours[p] += (h.until_h - q.now_h) * h.nodes;
      }
  for (std::size_t p = 0; p < m.pools.size(); ++p) {
    double committed_hours = 0;
    const auto& r = q.reservations[m.pools[p].reservation];
    const double until = r.until_h > 0 ? std::min(r.until_h, m.horizon_h) : m.horizon_h;
    committed_hours = std::max(0.0, until - r.from_h) * r.count;
    const double used = std::min(used_hours[p], committed_hours);
    s.costs.committed_used += used * m.pools[p].hourly;
    s.costs.committed_idle += (committed_hours - used) * m.pools[p].hourly;
  }
  for (auto& [kind, count] : fleet) s.fleet.push_back({kind, std::move(count)});
  return s;
}

}  // namespace nubo::cost::schedule_detail
