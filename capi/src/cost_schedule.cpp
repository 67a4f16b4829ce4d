// nubo_cost_schedule_*: a queue of jobs planned over reservations, on-demand and spot.
#include <memory>

#include "cost_handles.hpp"
#include "generated/options.hpp"
#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo/schedule.hpp"
#include "nubo_cost.h"
#include "sized_struct.hpp"
#include "text_out.hpp"

// In nubo::capi itself, not an unnamed namespace: the qualified calls below would find the
// catalog's and plan's to_handle() first and stop there.
namespace nubo::capi {

namespace cost = nubo::cost;

struct CostSchedule {
  cost::Queue queue;
  cost::Schedule schedule;
  std::vector<nubo_cost_estimate_info> estimates;  // per job, their text in `texts`
  Texts texts;
};

inline nubo_cost_schedule* to_handle(CostSchedule* s) {
  return reinterpret_cast<nubo_cost_schedule*>(s);
}
inline const CostSchedule& require_schedule(const nubo_cost_schedule* s) {
  if (!s) throw Error(Errc::invalid_argument, "schedule is NULL");
  return *reinterpret_cast<const CostSchedule*>(s);
}

static std::unique_ptr<CostSchedule> wrap(cost::Queue queue, cost::Schedule schedule) {
  auto s = std::make_unique<CostSchedule>();
  s->queue = std::move(queue);
  s->schedule = std::move(schedule);
  for (const auto& j : s->schedule.jobs)
    s->estimates.push_back(to_nubo_cost_estimate_info(j.estimate, s->texts));
  return s;
}

}  // namespace nubo::capi

extern "C" {

NUBO_C_API nubo_status nubo_cost_schedule_options_init(nubo_cost_schedule_options* options,
                                                       size_t struct_size) {
  return nubo::capi::guard("nubo_cost_schedule_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_options(options, struct_size);
  });
}

NUBO_C_API nubo_status nubo_cost_schedule_create(const nubo_cost_catalog* catalog,
                                                 const char* queue_path, const char* queue_json,
                                                 const nubo_cost_schedule_options* options,
                                                 nubo_cost_schedule** out) {
  return nubo::capi::guard("nubo_cost_schedule_create", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& c = nubo::capi::require_catalog(catalog);
    if (!queue_path && !queue_json)
      throw nubo::Error(nubo::Errc::invalid_argument, "give queue_path or queue_json");
    auto queue = queue_path ? nubo::cost::load_queue(queue_path)
                            : nubo::cost::parse_queue(queue_json, "queue_json");
    auto s = nubo::cost::schedule(c.catalog, queue, nubo::capi::read_options(options));
    *out = nubo::capi::to_handle(nubo::capi::wrap(std::move(queue), std::move(s)).release());
  });
}

NUBO_C_API nubo_status nubo_cost_schedule_update(const nubo_cost_catalog* catalog,
                                                 const nubo_cost_schedule* previous,
                                                 const char* update_json,
                                                 const nubo_cost_schedule_options* options,
                                                 nubo_cost_schedule** out) {
  return nubo::capi::guard("nubo_cost_schedule_update", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& c = nubo::capi::require_catalog(catalog);
    const auto& p = nubo::capi::require_schedule(previous);
    const auto update =
        nubo::cost::parse_queue_update(nubo::capi::require(update_json, "update_json"), "update");
    auto queue = nubo::cost::apply_updates(p.queue, p.schedule, update);
    auto s = nubo::cost::schedule(c.catalog, queue, nubo::capi::read_options(options));
    *out = nubo::capi::to_handle(nubo::capi::wrap(std::move(queue), std::move(s)).release());
  });
}

NUBO_C_API nubo_status nubo_cost_schedule_what_if(const nubo_cost_catalog* catalog,
                                                  const nubo_cost_schedule* schedule,
                                                  const char* reservation,
                                                  const nubo_cost_schedule_options* options,
                                                  double* saving, nubo_cost_schedule** out) {
  return nubo::capi::guard("nubo_cost_schedule_what_if", [&] {
    if (out) *out = nullptr;
    const auto& c = nubo::capi::require_catalog(catalog);
    const auto& s = nubo::capi::require_schedule(schedule);
    const auto added =
        nubo::cost::parse_reservation(nubo::capi::require(reservation, "reservation"));
    auto w = nubo::cost::what_if(c.catalog, s.queue, s.schedule, added,
                                 nubo::capi::read_options(options));
    if (saving) *saving = w.saving;
    if (out) {
      auto queue = s.queue;
      queue.reservations.push_back(added);
      *out = nubo::capi::to_handle(
          nubo::capi::wrap(std::move(queue), std::move(w.schedule)).release());
    }
  });
}

NUBO_C_API void nubo_cost_schedule_free(nubo_cost_schedule* schedule) {
  delete reinterpret_cast<nubo::capi::CostSchedule*>(schedule);
}

NUBO_C_API nubo_status nubo_cost_schedule_get_summary(const nubo_cost_schedule* schedule,
                                                      nubo_cost_schedule_summary* out) {
  return nubo::capi::guard("nubo_cost_schedule_get_summary", [&] {
    const auto& s = nubo::capi::require_schedule(schedule).schedule;
    nubo::capi::require(out, "out");
    nubo_cost_schedule_summary r{};
    r.method = static_cast<nubo_cost_schedule_method>(s.method);
    r.optimal = s.optimal;
    r.bound = s.bound;
    r.gap = s.gap;
    r.solve_s = s.solve_s;
    r.slot_h = s.slot_h;
    r.horizon_h = s.horizon_h;
    r.committed_used = s.costs.committed_used;
    r.committed_idle = s.costs.committed_idle;
    r.on_demand = s.costs.on_demand;
    r.spot = s.costs.spot;
    r.total = s.costs.total();
    r.jobs = s.jobs.size();
    r.unplaced = s.unplaced();
    r.fleet_rows = s.fleet.size();
    nubo::capi::write_sized(r, out, "out", "nubo_cost_schedule_summary");
  });
}

NUBO_C_API nubo_status nubo_cost_schedule_job(const nubo_cost_schedule* schedule, size_t index,
                                              nubo_cost_scheduled_job_info* out) {
  return nubo::capi::guard("nubo_cost_schedule_job", [&] {
    const auto& s = nubo::capi::require_schedule(schedule).schedule;
    nubo::capi::require(out, "out");
    const auto& j = s.jobs[nubo::capi::require_index(index, s.jobs.size(), "the schedule", "jobs")];
    nubo_cost_scheduled_job_info r{};
    r.name = j.name.c_str();
    r.tag = j.tag.c_str();
    r.placement = static_cast<nubo_cost_placement>(j.placement);
    r.reservation = j.reservation;
    r.start_h = j.start_h;
    r.finish_h = j.finish_h;
    r.deadline_h = j.deadline_h;
    r.cost = j.cost;
    r.reason = j.reason.c_str();
    nubo::capi::write_sized(r, out, "out", "nubo_cost_scheduled_job_info");
  });
}

NUBO_C_API nubo_status nubo_cost_schedule_job_estimate(const nubo_cost_schedule* schedule,
                                                       size_t index, nubo_cost_estimate_info* out) {
  return nubo::capi::guard("nubo_cost_schedule_job_estimate", [&] {
    const auto& h = nubo::capi::require_schedule(schedule);
    nubo::capi::require(out, "out");
    const auto i = nubo::capi::require_index(index, h.schedule.jobs.size(), "the schedule", "jobs");
    const auto& j = h.schedule.jobs[i];
    if (j.placement == nubo::cost::Placement::unplaced)
      throw nubo::Error(nubo::Errc::not_found, "job '" + j.name + "' is not placed: " + j.reason);
    nubo::capi::write_sized(h.estimates[i], out, "out", "nubo_cost_estimate_info");
  });
}

NUBO_C_API nubo_status nubo_cost_schedule_json(const nubo_cost_schedule* schedule, char* buf,
                                               size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_cost_schedule_json", [&] {
    nubo::capi::copy_text_out(nubo::capi::require_schedule(schedule).schedule.to_json(), "the JSON",
                              buf, capacity, needed);
  });
}

NUBO_C_API nubo_status nubo_cost_schedule_write_job_files(const nubo_cost_catalog* catalog,
                                                          const nubo_cost_schedule* schedule,
                                                          const char* format, const char* dir) {
  return nubo::capi::guard("nubo_cost_schedule_write_job_files", [&] {
    const auto& c = nubo::capi::require_catalog(catalog);
    const auto& s = nubo::capi::require_schedule(schedule);
    nubo::cost::write_job_files(
        c.catalog, s.schedule, s.queue,
        nubo::cost::parse_job_file_format(nubo::capi::require(format, "format")),
        nubo::capi::require(dir, "dir"));
  });
}

}  // extern "C"
