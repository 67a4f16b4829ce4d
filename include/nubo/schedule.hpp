// Cost for a queue of jobs (docs/schedule.md): which job runs where and when across capacity a
// team already pays for (reservations) and the cloud's on-demand and spot offers, so that every
// deadline is met at the lowest expected cost; the fleet that makes for every hour; what one
// more reservation would save; and job files for the engines that launch machines (SkyPilot,
// Slurm). Queues up to a few hundred jobs are solved exactly (a mixed-integer program, COIN-OR
// CBC); larger ones by a heuristic whose gap to a proven lower bound is reported.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/cost.hpp"
#include "nubo/export.hpp"

namespace nubo::cost {

// One job of the queue. Times are hours from the queue's start.
struct QueueJob {
  std::string name;  // unique in the queue: [A-Za-z0-9._-], at most 64 characters
  Workload workload;
  double release_h = 0;        // it may not start before
  double deadline_h = 0;       // it must finish by; 0: the horizon's end
  bool interruptible = false;  // may run on spot (it checkpoints and restarts)
  int min_nodes = 1, max_nodes = 1;
  int priority = 0;  // the heuristic places higher priorities first when capacity is short
  std::string tag;   // costs are summed by tag ("research", "prod")
  std::string gpu, provider, region;  // filters on its cloud options, as plan's
  std::string command;                // what the job runs, for the job files ("python train.py")
  bool uses_nubo = false;  // the job files run it under nubo-run (restart and checkpoints)
  // For the job files: what runs once on every node first ("pip install -r requirements.txt");
  // the folder the job runs in (SkyPilot copies it to the nodes; Slurm's --chdir, on a shared
  // file system); and the Slurm partition (empty: the cluster's default).
  std::string setup, workdir, partition;
  // Kubernetes: the container image it runs in, and the Kueue LocalQueue that admits it (empty:
  // none; the Job is created directly).
  std::string image, kueue;
};

// Capacity already paid for: `count` instances of one catalog row over [from_h, until_h), at a
// committed price spent whether it is used or not.
struct Reservation {
  std::string instance;
  std::string region;  // "": where the catalog prices the instance lowest
  int count = 1;
  double from_h = 0;
  double until_h = 0;  // 0: the horizon's end
  double hourly = -1;  // committed $/h per instance; < 0: the catalog's price for `term`
  Pricing term = Pricing::reserved_1y;
  // The reservation as its owner names it, which the job files target: an AWS capacity
  // reservation ("cr-0123abcd"), a GCP reservation, a Slurm reservation. Empty: none named.
  std::string name;
};

struct Queue {
  std::vector<QueueJob> jobs;
  std::vector<Reservation> reservations;
  // The hours planned; 0: to the latest deadline (else the latest release plus a week).
  double horizon_h = 0;
  // Re-planning from this hour: nothing starts before it (schedule --update).
  double now_h = 0;
  // When hour 0 is, UTC ("2026-12-08T09:00:00Z"): job files then start each job at a fixed time.
  // Empty: hour 0 is when the job files are submitted.
  std::string start;
  // Running jobs that keep `nodes` of a reservation until `until_h` (set by apply_updates).
  struct Held {
    std::string job;
    std::size_t reservation = 0;
    int nodes = 1;
    double until_h = 0;
  };
  std::vector<Held> held;
};

// The queue file (JSON; docs/schedule.md has the schema). Every error names the job (or
// reservation) and the field: a deadline before the release, a negative count, a NaN, an
// instance the catalog lacks (checked by schedule()), a number out of range.
NUBO_API Queue parse_queue(std::string_view json, const std::string& where);
NUBO_API Queue load_queue(const std::string& path);

enum class ScheduleMethod { automatic = 0, exact = 1, heuristic = 2 };
NUBO_API std::string_view schedule_method_name(ScheduleMethod m) noexcept;
NUBO_API ScheduleMethod parse_schedule_method(std::string_view text);

struct ScheduleOptions {
  ScheduleMethod method = ScheduleMethod::automatic;
  // automatic: exact for queues of at most this many jobs (a month of 300 solves in about a
  // second: benchmarks/results/schedule.md), the heuristic above
  std::size_t exact_up_to = 300;
  double time_limit_s = 20;  // the exact solver's; past it, its best with its gap
  double slot_h = 0;         // the time grid on reservations; 0: from the horizon
  PlanRequest request;       // spot interruption and restart defaults, measured rates
};

enum class Placement { reserved = 0, on_demand = 1, spot = 2, unplaced = 3 };
NUBO_API std::string_view placement_name(Placement p) noexcept;  // "reserved", "on-demand", ...

struct ScheduledJob {
  std::string name, tag;
  Placement placement = Placement::unplaced;
  std::size_t reservation = 0;  // reserved: which of the queue's reservations
  Estimate estimate;            // where it runs, its time and expected cost broken down
  double start_h = 0, finish_h = 0, deadline_h = 0;
  // Expected dollars beyond what is committed: 0 on a reservation (its hours are paid for),
  // the estimate's total otherwise (spot's rework included).
  double cost = 0;
  // When it is not on its cheapest option (the cheapest of reservations and plan's offers,
  // deadline aside): why. "" when it is.
  std::string reason;
};

// How many instances of one kind run in each slot of the schedule: the scaling plan.
struct FleetRow {
  std::string kind;        // "p4d.24xlarge us-east-1 reserved"
  std::vector<int> count;  // instances running in slot i (from i x slot_h)
};

struct ScheduleCosts {
  double committed_used = 0, committed_idle = 0;  // the reservations' price over the horizon
  double on_demand = 0, spot = 0;
  std::map<std::string, double> by_tag;  // on-demand and spot, and each tag's share of the
                                         // committed hours it used
  double total() const { return committed_used + committed_idle + on_demand + spot; }
};

struct NUBO_API Schedule {
  std::vector<ScheduledJob> jobs;  // placed or not, in the queue's order
  std::vector<FleetRow> fleet;
  double slot_h = 1, horizon_h = 0;
  ScheduleCosts costs;
  ScheduleMethod method = ScheduleMethod::exact;
  bool optimal = false;  // proven optimal (exact, solved to the end)
  // A lower bound on the total any schedule of this queue costs on this grid, and the gap of
  // this one to it: (total - bound) / total. Exact and optimal: 0.
  double bound = 0, gap = 0;
  double solve_s = 0;
  std::vector<std::string> notes;  // assumptions ("durations rounded up to 4 h slots", ...)

  std::size_t unplaced() const;
  std::string to_json() const;
};

// Plans the queue; Error(invalid_argument) naming the job or reservation for what the catalog
// or the rules refuse. A job that no option finishes by its deadline is left unplaced, with the
// reason (the fastest option's finish).
NUBO_API Schedule schedule(const Catalog& catalog, const Queue& queue,
                           const ScheduleOptions& options = {});

// "What if": the queue priced again with one more reservation. `spec` as the command line's
// --reserve: "INSTANCE[@REGION]=COUNT:TERM" with TERM 1y or 3y, e.g. "p4d.24xlarge=1:1y".
NUBO_API Reservation parse_reservation(std::string_view spec);
struct WhatIf {
  Reservation added;
  Schedule schedule;  // with it
  double saving = 0;  // total without minus total with (negative: it costs more)
};
NUBO_API WhatIf what_if(const Catalog& catalog, const Queue& queue, const Schedule& without,
                        const Reservation& added, const ScheduleOptions& options = {});

// Job files for the engines that launch machines: one per placed job in `dir` (made if needed),
// and a README.md that says in what order to submit them. Returns the paths written.
enum class JobFileFormat { skypilot = 0, slurm = 1, kubernetes = 2 };
NUBO_API JobFileFormat parse_job_file_format(std::string_view text);
NUBO_API std::vector<std::string> write_job_files(const Catalog& catalog, const Schedule& schedule,
                                                  const Queue& queue, JobFileFormat format,
                                                  const std::string& dir);

// What happened since a schedule was made (schedule --update): each job's state, with its
// actual runtime (finished, failed) or progress (running), from a profile or a CostMeter.
struct JobUpdate {
  std::string job;
  enum class State { finished, failed, running } state = State::finished;
  double started_h = 0;
  double runtime_h = 0;            // finished or failed: how long it ran
  double progress = 0;             // running: the fraction done, in (0, 1]
  std::optional<Profile> profile;  // measured: its workload becomes the profile's
};
struct QueueUpdate {
  double now_h = 0;
  std::vector<JobUpdate> jobs;
};
NUBO_API QueueUpdate parse_queue_update(std::string_view json, const std::string& where);
// The same from a file (a regular file of at most 64 MiB: a FIFO or /dev/zero is refused).
NUBO_API QueueUpdate load_queue_update(const std::string& path);
// The queue still to plan at `update.now_h`: finished jobs gone, failed ones released again at
// now (as their profile measured them, when given), running ones held where `previous` placed
// them until their projected end (elapsed / progress), the rest released no earlier than now.
NUBO_API Queue apply_updates(const Queue& queue, const Schedule& previous,
                             const QueueUpdate& update);

}  // namespace nubo::cost
