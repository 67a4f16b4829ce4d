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
#include <map>
#include <set>

#include "common/shell.hpp"
#include "common/small_file.hpp"
#include "common/text.hpp"
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

// Seconds since the epoch at the queue's hour 0 (checked where the queue was read); -1 when the
// queue names no start.
long long start_epoch(const Queue& queue) {
  if (queue.start.empty()) return -1;
  const auto t = text::parse_utc(queue.start);
  if (!t)
    throw Error(Errc::invalid_argument, "queue start '" + printable(queue.start) +
                                            "': a UTC time such as 2026-12-08T09:00:00Z");
  return *t;
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
std::string slurm(const Catalog& /*catalog*/, const ScheduledJob& s, const QueueJob& job,
                  const Queue& queue) {
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

// The node label each cloud's managed Kubernetes puts on its spot nodes, and the taint it
// puts with it (empty: none).
struct SpotNodes {
  const char *label, *value, *taint;
};
const SpotNodes* spot_nodes(const std::string& provider) {
  static const std::map<std::string, SpotNodes, std::less<>> table{
      {"aws", {"eks.amazonaws.com/capacityType", "SPOT", ""}},
      {"gcp", {"cloud.google.com/gke-spot", "true", ""}},
      {"azure",
       {"kubernetes.azure.com/scalesetpriority", "spot", "kubernetes.azure.com/scalesetpriority"}}};
  const auto it = table.find(provider);
  return it == table.end() ? nullptr : &it->second;
}

// A Kubernetes Job per placed job: on the placed instance type (the well-known
// node.kubernetes.io/instance-type label) with its GPUs, on spot nodes when placed on spot, under
// Kueue when the job names a LocalQueue. A job of several nodes is an Indexed Job, one pod a
// node, with a headless Service through which the pods find pod 0 (PyTorch's usual rendezvous on
// Kubernetes, without a CRD).
std::string kubernetes(const Catalog& /*catalog*/, const ScheduledJob& s, const QueueJob& job,
                       const Queue& /*queue*/) {
  const auto& e = s.estimate;
  if (job.image.empty())
    throw Error(Errc::invalid_argument, "job '" + job.name +
                                            "': give its container image (\"image\" in the "
                                            "queue file) for Kubernetes job files");
  const bool indexed = e.nodes > 1;
  std::string out;
  yaml::Writer y;
  y.comment(header_text(s));
  if (indexed) {
    y.string("apiVersion", "v1");
    y.string("kind", "Service");
    y.begin("metadata");
    y.string("name", s.name);
    y.end();
    y.begin("spec");
    y.string("clusterIP", "None");
    y.begin("selector");
    y.string("job-name", s.name);
    y.end();
    y.end();
    out = y.str() + "---\n";
    y = yaml::Writer();
  }
  y.string("apiVersion", "batch/v1");
  y.string("kind", "Job");
  y.begin("metadata");
  y.string("name", s.name);
  if (!s.tag.empty() || !job.kueue.empty()) {
    y.begin("labels");
    if (!s.tag.empty()) y.string("nubo-tag", s.tag);
    if (!job.kueue.empty()) y.string("kueue.x-k8s.io/queue-name", job.kueue);
    y.end();
  }
  y.end();
  y.begin("spec");
  if (!job.kueue.empty()) y.boolean("suspend", true);  // Kueue admits it
  if (indexed) {
    y.integer("completions", e.nodes);
    y.integer("parallelism", e.nodes);
    y.string("completionMode", "Indexed");
  }
  y.integer("backoffLimit", s.placement == Placement::spot || job.interruptible ? 3 : 0);
  y.integer("activeDeadlineSeconds",
            static_cast<long long>(std::ceil(e.hours() * 3600 * 1.2 + 600)));
  y.begin("template");
  y.begin("spec");
  y.string("restartPolicy", "Never");
  if (indexed) y.string("subdomain", s.name);
  y.begin("nodeSelector");
  y.string("node.kubernetes.io/instance-type", instance_type_of(e));
  const auto* spot = s.placement == Placement::spot ? spot_nodes(e.provider) : nullptr;
  if (spot) y.string(spot->label, spot->value);
  y.end();
  if (spot && *spot->taint) {
    y.items("tolerations");
    y.item();
    y.string("key", spot->taint);
    y.string("operator", "Exists");
    y.string("effect", "NoSchedule");
    y.end();
    y.end();
  }
  y.items("containers");
  y.item();
  y.string("name", "main");
  y.string("image", job.image);
  if (!job.workdir.empty()) y.string("workingDir", job.workdir);
  const std::string run =
      indexed ? run_line(job, "\"$NNODES\"", "\"$JOB_COMPLETION_INDEX\"", "\"$MASTER_ADDR\"")
              : run_line(job, "1", "0", "127.0.0.1");
  y.strings("command", {"bash", "-c", (job.setup.empty() ? "" : job.setup + "\n") + run});
  if (indexed) {
    y.items("env");
    y.item();
    y.string("name", "NNODES");
    y.string("value", std::to_string(e.nodes));
    y.end();
    y.item();
    y.string("name", "MASTER_ADDR");
    y.string("value", s.name + "-0." + s.name);
    y.end();
    y.end();
  }
  y.begin("resources");
  y.begin("limits");
  y.integer("nvidia.com/gpu", e.gpus_per_node);
  y.end();
  y.end();
  y.end();  // the container
  y.end();  // containers
  y.end();  // spec
  y.end();  // template
  y.end();  // spec
  return out + y.str();
}

// What each format writes: a file per job, and the script that starts them all.
struct Format {
  const char* name;       // in the README
  const char* extension;  // of a job's file
  unsigned mode;
  std::string (*file)(const Catalog&, const ScheduledJob&, const QueueJob&, const Queue&);
  const char* script;  // the script that starts every job
  // Its command for one file; `begin` the start as seconds since the epoch (-1: unknown).
  std::string (*start)(const std::string& file, long long begin);
  // Whether the script sleeps until each start (an engine with no start time of its own).
  bool waits;
  const char* how;                                // the README's first words on the script
  bool (*launches)(const std::string& provider);  // where it can run; nullptr: anywhere
};

const Format& format_of(JobFileFormat f) {
  static const Format skypilot_format{
      "SkyPilot",
      ".yaml",
      0644,
      skypilot,
      "launch.sh",
      [](const std::string& file, long long) {
        return "sky jobs launch --yes --detach-run " + shell::quote(file);
      },
      true,
      "launches each job with `sky jobs launch` at its start (spot jobs recover by themselves): "
      "leave it running, in tmux or screen, until the last is launched",
      skypilot_launches};
  static const Format slurm_format{
      "Slurm",
      ".sbatch",
      0755,
      slurm,
      "submit.sh",
      [](const std::string& file, long long begin) {
        return begin < 0 ? "sbatch " + shell::quote(file)
                         : "sbatch --begin=\"$(date -d @" + std::to_string(begin) +
                               " +%Y-%m-%dT%H:%M:%S)\" " + shell::quote(file);
      },
      false,
      "submits every file now with `sbatch`; Slurm holds each until its start",
      nullptr};
  static const Format kubernetes_format{
      "Kubernetes",
      ".yaml",
      0644,
      kubernetes,
      "apply.sh",
      [](const std::string& file, long long) { return "kubectl apply -f " + shell::quote(file); },
      true,
      "applies each job with `kubectl apply` at its start (Kueue, when a job names a queue, "
      "admits it): leave it running until the last is applied",
      nullptr};
  switch (f) {
    case JobFileFormat::skypilot:
      return skypilot_format;
    case JobFileFormat::slurm:
      return slurm_format;
    case JobFileFormat::kubernetes:
      return kubernetes_format;
  }
  throw Error(Errc::invalid_argument, "job files: unknown format");
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
  if (text == "kubernetes") return JobFileFormat::kubernetes;
  throw Error(Errc::invalid_argument,
              "job files '" + printable(std::string(text)) + "': skypilot, slurm or kubernetes");
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
  const auto& f = format_of(format);
  const long long t0 = start_epoch(queue);
  std::vector<std::string> written, elsewhere;
  const std::string script = f.script;
  std::string readme = std::string("# Job files from nubo-cost schedule\n\n") + "`./" + script +
                       "` " + f.how + "; each start counts " +
                       (t0 >= 0 ? "from " + queue.start : std::string("from when it is run")) +
                       ".\n\nIn order, each at its start (hours from the queue's start):\n\n"
                       "| order | job | file | start | placement | expected end | deadline |\n"
                       "|---:|---|---|---:|---|---:|---:|\n";
  // The script that starts them all: its lines, in start order.
  std::string starter = "#!/bin/bash\n" +
                        shell::comment(std::string("Starts every job: ") + f.how) +
                        "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n";
  if (f.waits)
    starter += (t0 >= 0 ? "t0=" + std::to_string(t0) : std::string("t0=$(date +%s)")) +
               "\nat() { local wait=$((t0 + $1 - $(date +%s))); if [ \"$wait\" -gt 0 ]; then sleep "
               "\"$wait\"; fi; }\n";
  for (const auto* placed_job : placed) {
    const auto& s = *placed_job;
    const auto it = by_name.find(s.name);
    if (it == by_name.end())
      throw Error(Errc::invalid_argument, "job files: job '" + s.name + "' is not in the queue");
    if (f.launches && !f.launches(s.estimate.provider)) {
      elsewhere.push_back("- " + s.name + ": on " + cell(s.estimate.provider) + ", where " +
                          f.name + " does not launch; use the provider's own tools (" +
                          cell(s.estimate.label()) + " in " + cell(s.estimate.region) + ")");
      continue;
    }
    const std::string file = s.name + f.extension;
    files::write_small_file(dir, file, f.file(catalog, s, *it->second, queue), f.mode, "job file");
    const auto offset_s = static_cast<long long>(std::floor(s.start_h * 3600));
    if (f.waits)
      starter += "at " + std::to_string(offset_s) + "; " + f.start(file, -1) + "\n";
    else
      starter += f.start(file, t0 >= 0 ? t0 + offset_s : -1) + "\n";
    written.push_back(dir + "/" + file);
    readme += "| " + std::to_string(written.size()) + " | " + s.name + " | " + file + " | " +
              fixed(s.start_h) + " h | " + std::string(placement_name(s.placement)) + " " +
              cell(s.estimate.label()) + " | " + fixed(s.finish_h) + " h | " + fixed(s.deadline_h) +
              " h |\n";
  }
  if (!elsewhere.empty()) {
    readme += std::string("\nNo ") + f.name + " file:\n\n";
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
