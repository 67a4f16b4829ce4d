// Job files for the engines that launch machines (docs/schedule.md, "Job files"): a SkyPilot
// task YAML or an sbatch script per placed job, and a README saying in what order to submit
// them. nubo launches nothing itself.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>

#include "common/shell.hpp"
#include "common/small_file.hpp"
#include "common/utf8.hpp"
#include "common/yaml.hpp"
#include "nubo/error.hpp"
#include "nubo/schedule.hpp"

namespace nubo::cost {
namespace {

std::string fixed(double v, int decimals = 1) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// The clouds SkyPilot launches on (its sky/clouds, release 0.14), by the catalog's provider
// names: a job placed elsewhere gets no task file, and the README says so.
bool skypilot_launches(const std::string& provider) {
  static const std::set<std::string, std::less<>> clouds{
      "aws",    "azure",  "cudo",    "do",        "fluidstack", "gcp",        "hyperbolic",
      "ibm",    "lambda", "mithril", "nebius",    "oci",        "paperspace", "primeintellect",
      "runpod", "scp",    "seeweb",  "shadeform", "vast",       "verda",      "yotta"};
  return clouds.contains(provider);
}

// SkyPilot's accelerator name for the instance's GPUs: the one its catalog gives the row when
// the row came from it, else the GPU model's own first part ("L40S", "H100").
std::string accelerator_of(const Catalog& catalog, const Estimate& e) {
  if (const auto* row = catalog.find(e.instance, e.region); row && !row->accelerator.empty())
    return row->accelerator;
  return e.gpu_model.substr(0, e.gpu_model.find('-'));
}

// GCP's GPUs come attached to a host ("n1-standard-8+1xV100" in the catalog): SkyPilot wants
// the host's type and the accelerator apart.
std::string instance_type_of(const Estimate& e) {
  return e.instance.substr(0, e.instance.find('+'));
}

// The job's command, whole, as one word for bash -c: whatever it holds (&&, a pipe, FOO=1 in
// front, several lines), all of it runs where srun or nubo-run starts it.
std::string command_line(const QueueJob& job) {
  if (job.command.empty())
    return "echo " + shell::quote("job " + job.name + ": no command in the queue file") +
           " >&2; exit 1";
  return "bash -c " + shell::quote(job.command, "job " + job.name + ": command");
}

// The job's command, under nubo-run when it uses nubo: restarts after a failure, the GPUs'
// health watched, the nodes met at node 0. `nodes`, `rank` and `master` are the engine's own
// shell expressions, constants of this file.
std::string run_line(const QueueJob& job, const std::string& nodes, const std::string& rank,
                     const std::string& master) {
  const std::string command = command_line(job);
  if (!job.uses_nubo || job.command.empty()) return command;
  return "nubo-run --nnodes " + nodes + " --node-rank " + rank + " --master-addr " + master +
         " --max-restarts 3 --watch-health 30 --exclude-unhealthy -- " + command;
}

// What the file is for, as prose: each emitter writes it as comments.
std::string header_text(const ScheduledJob& s) {
  std::string c = "nubo-cost schedule: " + s.name + " on " + s.estimate.label() + " in " +
                  s.estimate.region + ", from " + fixed(s.start_h) + " h, expected to end at " +
                  fixed(s.finish_h) + " h (deadline " + fixed(s.deadline_h) +
                  " h), expected cost " + format_money(s.cost);
  if (s.placement == Placement::reserved)
    c += "\nRuns on the team's reservation: its hours are already paid for.";
  if (s.placement == Placement::spot && s.estimate.checkpoint_interval_s > 0)
    c += "\nSpot: checkpoint every " + format_duration(s.estimate.checkpoint_interval_s) +
         " (at its interruption rate).";
  return c;
}

// The name of the reservation the job runs on, as its owner gave it ("" when none is named).
std::string reservation_name(const ScheduledJob& s, const Queue& queue) {
  if (s.placement != Placement::reserved || s.reservation >= queue.reservations.size()) return {};
  return queue.reservations[s.reservation].name;
}

// Seconds since the epoch at the queue's hour 0; -1 when the queue names no start.
long long start_epoch(const Queue& queue) {
  if (queue.start.empty()) return -1;
  std::tm tm{};
  if (std::sscanf(queue.start.c_str(), "%d-%d-%dT%d:%d:%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
    throw Error(Errc::invalid_argument, "queue start '" + printable(queue.start) +
                                            "': a UTC time such as 2026-12-08T09:00:00Z");
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<long long>(::timegm(&tm));
}

std::string skypilot(const Catalog& catalog, const ScheduledJob& s, const QueueJob& job,
                     const Queue& queue) {
  const auto& e = s.estimate;
  yaml::Writer y;
  y.comment(header_text(s));
  y.string("name", s.name);
  y.integer("num_nodes", e.nodes);
  y.begin("resources");
  y.string("cloud", e.provider);
  y.string("region", e.region);
  y.string("instance_type", instance_type_of(e));
  y.string("accelerators", accelerator_of(catalog, e) + ":" + std::to_string(e.gpus_per_node));
  y.boolean("use_spot", s.placement == Placement::spot);
  if (s.placement == Placement::spot) {
    y.begin("job_recovery");
    y.string("strategy", "FAILOVER");
    y.integer("max_restarts_on_errors", 3);
    y.end();
  }
  if (!s.tag.empty()) {
    y.begin("labels");
    y.string("nubo-tag", s.tag);
    y.end();
  }
  y.end();
  // SkyPilot targets a named reservation of the clouds that have them through its config.
  if (const auto r = reservation_name(s, queue);
      !r.empty() && (e.provider == "aws" || e.provider == "gcp")) {
    y.begin("config");
    y.begin(e.provider);
    y.strings("specific_reservations", {r});
    y.end();
    y.end();
  }
  if (!job.workdir.empty()) y.string("workdir", job.workdir);
  if (!job.setup.empty()) y.text("setup", job.setup + "\n");
  y.text("run", run_line(job, "\"$SKYPILOT_NUM_NODES\"", "\"$SKYPILOT_NODE_RANK\"",
                         "\"$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\"") +
                    "\n");
  return y.str();
}

// Slurm's time limit: the expected time with a fifth more and ten minutes, in whole minutes.
std::string slurm_time(double hours) {
  const auto minutes = static_cast<long long>(std::ceil(hours * 60 * 1.2 + 10));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:00", minutes / 1440, minutes / 60 % 24,
                minutes % 60);
  return buf;
}

// The job's name is checked where the queue is read (letters, digits, '.', '-', '_'): the one
// value an #SBATCH line takes from outside.
// Slurm's GPU type for the GPU model, as sites name their gres types: its family, lower-case
// ("a100", "h100", "l40s").
std::string gres_type(const Estimate& e) {
  std::string type = e.gpu_model.substr(0, e.gpu_model.find('-'));
  for (auto& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

// The partition, reservation and folder are checked where the queue is read (letters, digits and
// a few marks): with the job's name, the values an #SBATCH line takes from outside.
std::string slurm(const ScheduledJob& s, const QueueJob& job, const Queue& queue) {
  const auto& e = s.estimate;
  std::string b = "#!/bin/bash\n";
  b += "#SBATCH --job-name=" + s.name + "\n";
  b += "#SBATCH --nodes=" + std::to_string(e.nodes) + "\n";
  b += "#SBATCH --ntasks-per-node=1\n";
  b += "#SBATCH --gpus-per-node=" + gres_type(e) + ":" + std::to_string(e.gpus_per_node) + "\n";
  if (!job.partition.empty()) b += "#SBATCH --partition=" + job.partition + "\n";
  if (const auto r = reservation_name(s, queue); !r.empty())
    b += "#SBATCH --reservation=" + r + "\n";
  if (!job.workdir.empty()) b += "#SBATCH --chdir=" + job.workdir + "\n";
  b += "#SBATCH --time=" + slurm_time(e.hours()) + "\n";
  const auto begin_minutes = static_cast<long long>(std::floor(s.start_h * 60));
  b += "#SBATCH --begin=now";
  if (begin_minutes > 0) {  // appended piece by piece: GCC 12 warns falsely on "+" + to_string
    b += '+';
    b += std::to_string(begin_minutes);
    b += "minutes";
  }
  b += "\n";
  if (s.placement == Placement::spot || job.interruptible) b += "#SBATCH --requeue\n";
  b += shell::comment(header_text(s));
  b += shell::comment(
      "--begin counts from submission: submit.sh submits every file at once, with each job's "
      "own start when the queue names its start time. The GPU type is the family's name; a "
      "site whose gres types are named otherwise (sinfo -o %G) adjusts --gpus-per-node.");
  b += "set -euo pipefail\n";
  if (!job.setup.empty())
    b += "srun --ntasks-per-node=1 bash -c " +
         shell::quote(job.setup, "job " + job.name + ": setup") + "\n";
  b += "srun " +
       run_line(job, "\"$SLURM_JOB_NUM_NODES\"", "\"$SLURM_NODEID\"",
                "\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\"") +
       "\n";
  return b;
}

// A cell of the README's table: one line, and no '|' to end the cell.
std::string cell(const std::string& value) {
  std::string out;
  for (const auto& line : utf8::ascii_lines(value)) out += line;
  for (std::size_t at = 0; (at = out.find('|', at)) != std::string::npos; at += 2)
    out.replace(at, 1, "\\|");
  return out;
}

}  // namespace

JobFileFormat parse_job_file_format(std::string_view text) {
  if (text == "skypilot") return JobFileFormat::skypilot;
  if (text == "slurm") return JobFileFormat::slurm;
  throw Error(Errc::invalid_argument,
              "job files '" + printable(std::string(text)) + "': skypilot or slurm");
}

std::vector<std::string> write_job_files(const Catalog& catalog, const Schedule& schedule,
                                         const Queue& queue, JobFileFormat format,
                                         const std::string& dir) {
  if (dir.empty()) throw Error(Errc::invalid_argument, "job files: no folder given");
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw Error(errno == ENOENT ? Errc::not_found : Errc::io,
                dir + ": cannot make the folder: " + std::strerror(errno));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(Errc::invalid_argument, dir + " is not a folder");
  std::map<std::string, const QueueJob*> by_name;
  for (const auto& j : queue.jobs) by_name[j.name] = &j;
  std::vector<const ScheduledJob*> placed;
  for (const auto& s : schedule.jobs)
    if (s.placement != Placement::unplaced) placed.push_back(&s);
  std::stable_sort(placed.begin(), placed.end(),
                   [](const auto* a, const auto* b) { return a->start_h < b->start_h; });
  const bool sky = format == JobFileFormat::skypilot;
  const long long t0 = start_epoch(queue);
  std::vector<std::string> written, elsewhere;
  const std::string script = sky ? "launch.sh" : "submit.sh";
  const std::string when = t0 >= 0 ? "from " + queue.start : "from when it is run";
  std::string readme =
      std::string("# Job files from nubo-cost schedule\n\n") +
      (sky ? "`./launch.sh` launches each job with `sky jobs launch` at its start, " + when +
                 " (spot jobs recover by themselves): leave it running, in tmux or screen, until "
                 "the last is launched. Or launch each file by hand at its start.\n\n"
           : "`./submit.sh` submits every file now with `sbatch`; Slurm holds each until its "
             "start, " +
                 when + ".\n\n") +
      "In order, each at its start (hours from the queue's start):\n\n"
      "| order | job | file | start | placement | expected end | deadline |\n"
      "|---:|---|---|---:|---|---:|---:|\n";
  // The script that starts them all: its lines, in start order.
  std::string starter = "#!/bin/bash\n" +
                        shell::comment(sky ? "Launches each job at its start: leave it running."
                                           : "Submits every job now; Slurm holds each until its "
                                             "start.") +
                        "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n";
  if (sky)
    starter += (t0 >= 0 ? "t0=" + std::to_string(t0) : std::string("t0=$(date +%s)")) +
               "\nat() { local wait=$((t0 + $1 - $(date +%s))); if [ \"$wait\" -gt 0 ]; then sleep "
               "\"$wait\"; fi; }\n";
  for (std::size_t i = 0; i < placed.size(); ++i) {
    const auto& s = *placed[i];
    const auto it = by_name.find(s.name);
    if (it == by_name.end())
      throw Error(Errc::invalid_argument, "job files: job '" + s.name + "' is not in the queue");
    if (sky && !skypilot_launches(s.estimate.provider)) {
      elsewhere.push_back("- " + s.name + ": on " + cell(s.estimate.provider) +
                          ", where SkyPilot does not launch; use the provider's own tools (" +
                          cell(s.estimate.label()) + " in " + cell(s.estimate.region) + ")");
      continue;
    }
    const std::string file = s.name + (sky ? ".yaml" : ".sbatch");
    const std::string path = dir + "/" + file;
    files::write_small_file(
        dir, file, sky ? skypilot(catalog, s, *it->second, queue) : slurm(s, *it->second, queue),
        sky ? 0644 : 0755, "job file");
    const auto offset_s = static_cast<long long>(std::floor(s.start_h * 3600));
    if (sky)
      starter += "at " + std::to_string(offset_s) + "; sky jobs launch --yes --detach-run " +
                 shell::quote(file) + "\n";
    else if (t0 >= 0)
      starter += "sbatch --begin=\"$(date -d @" + std::to_string(t0 + offset_s) +
                 " +%Y-%m-%dT%H:%M:%S)\" " + shell::quote(file) + "\n";
    else
      starter += "sbatch " + shell::quote(file) + "\n";
    written.push_back(path);
    readme += "| " + std::to_string(written.size()) + " | " + s.name + " | " + file + " | " +
              fixed(s.start_h) + " h | " + std::string(placement_name(s.placement)) + " " +
              cell(s.estimate.label()) + " | " + fixed(s.finish_h) + " h | " + fixed(s.deadline_h) +
              " h |\n";
  }
  if (!elsewhere.empty()) {
    readme += "\nNo SkyPilot file:\n\n";
    for (const auto& line : elsewhere) readme += line + "\n";
  }
  if (schedule.unplaced() > 0) {
    readme += "\nNot placed (no file):\n\n";
    for (const auto& s : schedule.jobs)
      if (s.placement == Placement::unplaced)
        readme += "- " + s.name + ": " + cell(s.reason) + "\n";
  }
  files::write_small_file(dir, script, starter, 0755, "job files' " + script);
  written.push_back(dir + "/" + script);
  files::write_small_file(dir, "README.md", readme, 0644, "job files' README");
  written.push_back(dir + "/README.md");
  return written;
}

}  // namespace nubo::cost
