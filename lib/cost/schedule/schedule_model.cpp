#include "cost/schedule/schedule_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "nubo/error.hpp"

namespace nubo::cost::schedule_detail {
namespace {

constexpr int kMaxSlots = 168;  // the grid's resolution: a week in hours, a month in 5 h slots
constexpr double kMinSlotH = 1.0 / 60;    // a slot given: at least a minute
constexpr double kMaxGridSlots = 100000;  // and a grid of at most this many

[[noreturn]] void bad(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

double horizon_of(const Queue& q) {
  if (q.horizon_h > 0) return q.horizon_h;
  double h = q.now_h;
  for (const auto& j : q.jobs) h = std::max(h, j.deadline_h > 0 ? j.deadline_h : j.release_h + 168);
  return h;
}

// The reservations as pools: their instance rows, committed prices and free capacity per slot.
std::vector<Pool> pools_of(const Catalog& catalog, const Queue& q, const Model& m) {
  std::vector<Pool> pools;
  for (std::size_t i = 0; i < q.reservations.size(); ++i) {
    const auto& r = q.reservations[i];
    const std::string what = "reservations[" + std::to_string(i) + "] (" + r.instance + ")";
    Pool p;
    p.reservation = i;
    p.instance = catalog.find(r.instance, r.region);
    if (!p.instance) {
      try {
        catalog.get(r.instance, r.region);
      } catch (const Error& e) {
        bad(what + ": " + e.what());
      }
    }
    p.hourly = r.hourly >= 0 ? r.hourly : p.instance->price(r.term);
    if (p.hourly < 0)
      bad(what + ": the catalog has no " + std::string(pricing_name(r.term)) +
          " price for it; give \"hourly\"");
    const double until = r.until_h > 0 ? std::min(r.until_h, m.horizon_h) : m.horizon_h;
    p.capacity.assign(static_cast<std::size_t>(m.slots), 0);
    for (int s = 0; s < m.slots; ++s)
      // Whole slots only: a job placed in a slot may use all of it.
      if (s * m.slot_h >= r.from_h - 1e-9 && (s + 1) * m.slot_h <= until + 1e-9)
        p.capacity[static_cast<std::size_t>(s)] = r.count;
    for (const auto& held : q.held)
      if (held.reservation == i)
        for (int s = 0; s < m.slots && s * m.slot_h < held.until_h; ++s)
          p.capacity[static_cast<std::size_t>(s)] =
              std::max(0, p.capacity[static_cast<std::size_t>(s)] - held.nodes);
    pools.push_back(std::move(p));
  }
  return pools;
}

// A catalog of the reserved rows alone, each priced at its reservation, for the planner to
// tell which node counts fit and how long they take.
Catalog pool_catalog(const std::vector<Pool>& pools) {
  auto c = Catalog::empty();
  for (const auto& p : pools) {
    if (c.find(p.instance->name, p.instance->region)) continue;
    Instance row = *p.instance;
    row.reserved_1y = row.reserved_3y = std::max(p.hourly, 1e-6);
    row.reserved_1y_derived = row.reserved_3y_derived = false;
    c.add(row);
  }
  return c;
}

PlanRequest request_for(const QueueJob& j, const ScheduleOptions& o) {
  auto r = o.request;
  r.min_nodes = j.min_nodes;
  r.max_nodes = j.max_nodes;
  r.gpu = j.gpu;
  r.provider = j.provider;
  r.region = j.region;
  r.deadline_s = 0;
  r.budget = 0;
  r.limit = 0;
  r.rank = PlanRequest::Rank::cost;
  return r;
}

// The job's cloud offers: the cheapest that finishes in time, the cheapest at all, and (when
// none is in time) the fastest.
void cloud_ways(const Catalog& catalog, const QueueJob& j, const ScheduleOptions& o, JobWays& w) {
  auto r = request_for(j, o);
  r.pricings = j.interruptible ? std::vector<Pricing>{Pricing::on_demand, Pricing::spot}
                               : std::vector<Pricing>{Pricing::on_demand};
  const auto p = plan(catalog, j.workload, r);
  const double window = w.deadline_h - w.release_h;
  if (p.ranked.empty() && !p.exclusions().empty())
    w.excluded = p.exclusions().front().subject + ": " + p.exclusions().front().reason;
  for (const auto& e : p.ranked) {
    if (!w.cheapest) w.cheapest = e;
    if (!w.cloud && e.hours() <= window + 1e-9) w.cloud = e;
    if (!w.fastest || e.hours() < w.fastest->hours()) w.fastest = e;
    if (!w.spot && e.pricing == Pricing::spot) w.spot = e;
  }
  if (j.interruptible && !w.spot) {
    r.pricings = {Pricing::spot};
    const auto spot = plan(catalog, j.workload, r);
    if (!spot.exclusions().empty()) w.spot_excluded = spot.exclusions().front().reason;
  }
}

void reserved_ways(const Catalog& pools_catalog, const QueueJob& j, const ScheduleOptions& o,
                   const Model& m, JobWays& w) {
  auto r = request_for(j, o);
  r.pricings = {Pricing::reserved_1y};
  const auto p = plan(pools_catalog, j.workload, r);
  const int first = static_cast<int>(std::ceil(w.release_h / m.slot_h - 1e-9));
  for (const auto& e : p.ranked) {
    // In double first: a run longer than the grid (its hours are the planner's, unbounded) has
    // no start, and no count past the grid becomes an int.
    const double need = std::ceil(e.hours() / m.slot_h - 1e-9);
    if (!(need <= m.slots)) continue;
    const int slots = std::max(1, static_cast<int>(need));
    const int last =
        std::min(static_cast<int>(std::floor(w.deadline_h / m.slot_h + 1e-9)), m.slots) - slots;
    if (last < first) continue;
    for (std::size_t i = 0; i < m.pools.size(); ++i) {
      const auto& pool = m.pools[i];
      if (pool.instance->name != e.instance || pool.instance->region != e.region ||
          pool.instance->provider != e.provider)
        continue;
      // The starts at which the pool alone has room for it throughout.
      const auto room = [&](int s) {
        for (int t = s; t < s + slots; ++t)
          if (pool.capacity[static_cast<std::size_t>(t)] < e.nodes) return false;
        return true;
      };
      int from = first, to = last;
      while (from <= to && !room(from)) ++from;
      while (to >= from && !room(to)) --to;
      if (from > to) continue;
      w.reserved.push_back({i, e.nodes, slots, from, to, e});
    }
  }
}

}  // namespace

double dollars(const Model& m, const std::vector<Choice>& choices) {
  double d = 0;
  for (std::size_t j = 0; j < choices.size(); ++j) {
    if (choices[j].kind == Choice::cloud) d += m.jobs[j].cloud_cost();
    if (choices[j].kind == Choice::none) d += kUnplacedPenalty;
  }
  return d;
}

bool fits(const Model& m, const ReservedWay& way, int start,
          const std::vector<std::vector<int>>& used) {
  const auto& cap = m.pools[way.pool].capacity;
  const auto& u = used[way.pool];
  for (int s = start; s < start + way.slots; ++s)
    if (u[static_cast<std::size_t>(s)] + way.nodes > cap[static_cast<std::size_t>(s)]) return false;
  return true;
}

void take(const ReservedWay& way, int start, std::vector<std::vector<int>>& used, int sign) {
  for (int s = start; s < start + way.slots; ++s)
    used[way.pool][static_cast<std::size_t>(s)] += sign * way.nodes;
}

Model build_model(const Catalog& catalog, const Queue& q, const ScheduleOptions& o,
                  std::chrono::steady_clock::time_point deadline) {
  if (q.jobs.empty()) bad("the queue has no jobs");
  // A slot of a minute is finer than any estimate (and than Slurm's --begin): the grid is
  // checked in double, before any count becomes an int.
  if (!(o.slot_h == 0 || (o.slot_h >= kMinSlotH && o.slot_h <= 8766)))
    bad("slot: 0 (chosen from the horizon), or 1 min to 8766 h; got " + std::to_string(o.slot_h) +
        " h");
  if (!(o.time_limit_s > 0 && o.time_limit_s <= 86400)) bad("time limit: expected (0, 86400] s");
  Model m;
  m.horizon_h = horizon_of(q);
  m.slot_h = o.slot_h > 0 ? o.slot_h : std::max(1.0, std::ceil(m.horizon_h / kMaxSlots));
  const double slots = std::ceil(m.horizon_h / m.slot_h - 1e-9);
  if (!(slots <= kMaxGridSlots))
    bad("the grid would have " + std::to_string(slots) + " slots of " + std::to_string(m.slot_h) +
        " h over " + std::to_string(m.horizon_h) + " h; at most " +
        std::to_string(static_cast<int>(kMaxGridSlots)) + ": give a larger slot");
  m.slots = std::max(1, static_cast<int>(slots));
  m.pools = pools_of(catalog, q, m);
  if (!q.reservations.empty() && m.slot_h > 1)
    m.notes.push_back("reservations are planned in " + std::to_string(static_cast<int>(m.slot_h)) +
                      " h slots: a job on one holds its nodes for whole slots");
  const auto reserved_catalog = pool_catalog(m.pools);
  for (const auto& j : q.jobs) {
    if (std::chrono::steady_clock::now() > deadline) {
      char why[240];
      std::snprintf(why, sizeof why,
                    "the time limit (%g s) ran out while pricing the jobs' offers: %zu of %zu "
                    "priced; give a longer --time-limit (about %.0f s for this queue)",
                    o.time_limit_s, m.jobs.size(), q.jobs.size(),
                    std::ceil(o.time_limit_s * static_cast<double>(q.jobs.size()) /
                              static_cast<double>(std::max<std::size_t>(1, m.jobs.size())) * 1.5));
      throw Error(Errc::timeout, why);
    }
    const std::string named = "job '" + j.name + "'";
    if (j.deadline_h > 0 && j.deadline_h > m.horizon_h + 1e-9)
      bad(named + ": its deadline is past the horizon (" + std::to_string(m.horizon_h) +
          " h): give a longer \"horizon\"");
    JobWays w;
    w.release_h = std::max(j.release_h, q.now_h);
    w.deadline_h = j.deadline_h > 0 ? j.deadline_h : m.horizon_h;
    if (w.deadline_h > w.release_h) {
      try {
        cloud_ways(catalog, j, o, w);
        if (!m.pools.empty()) reserved_ways(reserved_catalog, j, o, m, w);
      } catch (const Error& e) {
        throw Error(e.code(), named + ": " + e.what());
      }
    }
    m.jobs.push_back(std::move(w));
  }
  return m;
}

}  // namespace nubo::cost::schedule_detail
