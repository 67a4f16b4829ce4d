// The live view: the queue that remains once some jobs finished, failed or are running, re-planned
// from now (schedule --update).
#include <algorithm>
#include <map>

#include "nubo/error.hpp"
#include "nubo/schedule.hpp"

namespace nubo::cost {

Queue apply_updates(const Queue& queue, const Schedule& previous, const QueueUpdate& update) {
  std::map<std::string, const JobUpdate*> by_name;
  for (const auto& u : update.jobs) {
    if (!by_name.emplace(u.job, &u).second)
      throw Error(Errc::invalid_argument, "update: job '" + u.job + "' appears twice");
  }
  std::map<std::string, const ScheduledJob*> placed;
  for (const auto& s : previous.jobs) placed[s.name] = &s;
  for (const auto& entry : by_name) {
    const std::string& name = entry.first;  // a structured binding clang 14 cannot capture
    const bool known = std::any_of(queue.jobs.begin(), queue.jobs.end(),
                                   [&](const QueueJob& j) { return j.name == name; });
    if (!known)
      throw Error(Errc::invalid_argument, "update: job '" + name + "' is not in the queue");
  }
  Queue next = queue;
  next.now_h = std::max(queue.now_h, update.now_h);
  next.jobs.clear();
  for (const auto& job : queue.jobs) {
    const auto it = by_name.find(job.name);
    if (it == by_name.end()) {
      auto j = job;
      j.release_h = std::max(j.release_h, next.now_h);
      if (j.deadline_h > 0 && j.deadline_h <= j.release_h)
        j.deadline_h = 0;  // late: as soon as can be
      next.jobs.push_back(std::move(j));
      continue;
    }
    const auto& u = *it->second;
    using State = JobUpdate::State;
    if (u.state == State::finished) continue;
    if (u.state == State::failed) {
      // Again from now, as the profile measured it when there is one.
      auto j = job;
      if (u.profile) {
        const auto epochs = j.workload.epochs;
        auto tags = j.workload.tags;
        j.workload = Workload::from_profile(*u.profile, epochs);
        j.workload.name = j.name;
        j.workload.tags = std::move(tags);
      }
      j.release_h = next.now_h;
      if (j.deadline_h > 0 && j.deadline_h <= j.release_h) j.deadline_h = 0;
      next.jobs.push_back(std::move(j));
      continue;
    }
    // Running: it keeps where it runs until its projected end (CostMeter's projection).
    const double elapsed = next.now_h - u.started_h;
    const double until = u.started_h + elapsed / u.progress;
    const auto where = placed.find(job.name);
    if (where != placed.end() && where->second->placement == Placement::reserved)
      next.held.push_back(
          {job.name, where->second->reservation, where->second->estimate.nodes, until});
  }
  if (next.jobs.empty())
    throw Error(Errc::invalid_argument, "update: no job is left to plan (all finished or running)");
  return next;
}

}  // namespace nubo::cost
