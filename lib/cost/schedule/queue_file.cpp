// The queue file, its updates, and --reserve specs (docs/schedule.md). Strict: an unknown key is
// an error naming it (a typo would otherwise silently drop a constraint), and every value is
// checked where it is read, naming the job or reservation and the field.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "common/json.hpp"
#include "common/small_file.hpp"
#include "common/text.hpp"
#include "common/utf8.hpp"
#include "nubo/error.hpp"
#include "nubo/schedule.hpp"
#include "nubo/units.hpp"

namespace nubo::cost {
namespace {

using Json = nlohmann::json;

constexpr double kMaxHours = 10 * 8766.0;  // ten years: a queue planned further is a mistake
constexpr std::size_t kMaxJobs = 100000, kMaxReservations = 1000;

[[noreturn]] void bad(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

std::string hours_text(double h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g h", h);
  return buf;
}

void only_keys(const Json& object, const std::set<std::string>& allowed, const std::string& what) {
  if (!object.is_object()) bad(what + ": expected an object");
  for (const auto& [key, value] : object.items())
    if (!allowed.contains(key))
      bad(what + ": unknown field '" + printable(key.substr(0, 64)) +
          "' (known: " + text::join({allowed.begin(), allowed.end()}, ", ") + ")");
}

// Hours: a number (hours) or a duration ("36h", "3d", "1w").
double hours_of(const Json& v, const std::string& what) {
  double h = 0;
  if (v.is_number()) {
    h = v.get<double>();
  } else if (v.is_string()) {
    h = parse_duration(v.get<std::string>(), what) / 3600;
  } else {
    bad(what + ": expected hours (a number) or a duration such as \"36h\" or \"3d\"");
  }
  if (!std::isfinite(h) || h < 0 || h > kMaxHours)
    bad(what + ": " + hours_text(h) + " is out of range [0, " + hours_text(kMaxHours) + "]");
  return h;
}

long whole(const Json& v, const std::string& what, long min, long max) {
  if (!v.is_number()) bad(what + ": expected a whole number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(min) ||
      d > static_cast<double>(max))
    bad(what + ": " + v.dump().substr(0, 40) + " is not a whole number in [" + std::to_string(min) +
        ", " + std::to_string(max) + "]");
  return static_cast<long>(d);
}

// A string of the file: one line of printable UTF-8 (a command may hold several), checked here
// since it reaches terminals, job files and host names.
std::string string_of(const Json& v, const std::string& what, std::size_t max = 1024,
                      utf8::Allow allow = utf8::Allow::single_line) {
  if (!v.is_string()) bad(what + ": expected a string");
  auto s = v.get<std::string>();
  utf8::check_plain(s, what, max, allow);
  return s;
}

bool bool_of(const Json& v, const std::string& what) {
  if (!v.is_boolean()) bad(what + ": expected true or false");
  return v.get<bool>();
}

// Job names become file names (job files) and keys: a safe alphabet.
void check_name(const std::string& name, const std::string& what) {
  if (name.empty() || name.size() > 64) bad(what + ": a name of 1 to 64 characters is needed");
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      bad(what + ": '" + printable(name) + "' may hold only letters, digits, '.', '-' and '_'");
  if (name.front() == '.') bad(what + ": '" + name + "' may not start with '.'");
}

// Text that reaches an #SBATCH line or a YAML key of a job file as one word: a partition, a
// reservation's name, a folder. No spaces, quotes or shell characters.
std::string word_of(const Json& v, const std::string& what, const char* extra) {
  auto s = string_of(v, what, 1024);
  if (s.empty()) bad(what + ": empty");
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr(extra, c))
      bad(what + ": '" + printable(s) + "' may hold only letters, digits and " + extra);
  return s;
}

// "2026-12-08T09:00:00Z" (seconds optional): checked, and written back whole.
std::string utc_of(const Json& v, const std::string& what) {
  const auto s = string_of(v, what, 32);
  const auto t = text::parse_utc(s);
  if (!t) bad(what + ": '" + printable(s) + "': a UTC time such as \"2026-12-08T09:00:00Z\"");
  return text::utc_text(*t);
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

Workload workload_of(const Json& v, const std::string& what, const std::string& base_dir) {
  if (!v.is_object())
    bad(what + ": expected an object of workload fields (\"params\": \"7B\", ...)");
  std::map<std::string, std::string> fields;
  for (const auto& [key, value] : v.items()) {
    std::string name = key;
    for (auto& c : name)
      if (c == '_') c = '-';
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_number()) {
      const double d = value.get<double>();
      if (!std::isfinite(d)) bad(what + "." + key + ": not a finite number");
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      text = buf;
    } else {
      bad(what + "." + key + ": expected a string or a number");
    }
    if (name == "profile" && !text.empty() && text.front() != '/') text = base_dir + text;
    fields[name] = text;
  }
  return workload_from_fields(fields, what + ".");
}

void nodes_of(const Json& v, QueueJob& j, const std::string& what) {
  if (v.is_number()) {
    j.min_nodes = j.max_nodes = static_cast<int>(whole(v, what, 1, 4096));
  } else if (v.is_array() && v.size() == 2) {
    j.min_nodes = static_cast<int>(whole(v[0], what + "[0]", 1, 4096));
    j.max_nodes = static_cast<int>(whole(v[1], what + "[1]", 1, 4096));
  } else if (v.is_string()) {
    const auto s = v.get<std::string>();
    const auto dash = s.find('-');
    const auto part = [&](std::string_view t) {
      return static_cast<int>(text::parse_int(t, what, 1, 4096));
    };
    j.min_nodes = part(std::string_view(s).substr(0, dash));
    j.max_nodes =
        dash == std::string::npos ? j.min_nodes : part(std::string_view(s).substr(dash + 1));
  } else {
    bad(what + ": expected N, \"MIN-MAX\" or [MIN, MAX]");
  }
  if (j.max_nodes < j.min_nodes)
    bad(what + ": " + std::to_string(j.min_nodes) + " to " + std::to_string(j.max_nodes) +
        " counts down");
}

QueueJob job_of(const Json& v, const std::string& what, const std::string& base_dir) {
  only_keys(v,
            {"name", "workload", "release", "deadline", "interruptible", "nodes", "priority", "tag",
             "gpu", "provider", "region", "command", "nubo", "setup", "workdir", "partition",
             "image", "kueue"},
            what);
  QueueJob j;
  if (!v.contains("name")) bad(what + ": no name");
  j.name = string_of(v["name"], what + ".name", 64);
  check_name(j.name, what + ".name");
  const std::string named = "job '" + j.name + "'";
  if (!v.contains("workload")) bad(named + ": no workload");
  j.workload = workload_of(v["workload"], named + ": workload", base_dir);
  j.workload.name = j.name;
  if (v.contains("release")) j.release_h = hours_of(v["release"], named + ": release");
  if (v.contains("deadline")) {
    j.deadline_h = hours_of(v["deadline"], named + ": deadline");
    if (j.deadline_h <= j.release_h)
      bad(named + ": deadline " + hours_text(j.deadline_h) + " is not after its release " +
          hours_text(j.release_h));
  }
  if (v.contains("interruptible"))
    j.interruptible = bool_of(v["interruptible"], named + ": interruptible");
  if (v.contains("nodes")) nodes_of(v["nodes"], j, named + ": nodes");
  if (v.contains("priority"))
    j.priority = static_cast<int>(whole(v["priority"], named + ": priority", -1000000, 1000000));
  if (v.contains("tag")) j.tag = string_of(v["tag"], named + ": tag", 128);
  if (v.contains("gpu")) j.gpu = string_of(v["gpu"], named + ": gpu", 64);
  if (v.contains("provider")) j.provider = string_of(v["provider"], named + ": provider", 64);
  if (v.contains("region")) j.region = string_of(v["region"], named + ": region", 64);
  if (v.contains("command"))
    j.command = string_of(v["command"], named + ": command", 4096, utf8::Allow::lines);
  if (v.contains("nubo")) j.uses_nubo = bool_of(v["nubo"], named + ": nubo");
  if (v.contains("setup"))
    j.setup = string_of(v["setup"], named + ": setup", 4096, utf8::Allow::lines);
  if (v.contains("workdir")) j.workdir = word_of(v["workdir"], named + ": workdir", "._-/~+@");
  if (v.contains("partition")) j.partition = word_of(v["partition"], named + ": partition", "._-");
  if (v.contains("image")) j.image = word_of(v["image"], named + ": image", "._-/:@");
  if (v.contains("kueue")) j.kueue = word_of(v["kueue"], named + ": kueue", ".-");
  return j;
}

Pricing term_of(const std::string& term, const std::string& what) {
  try {
    const auto p = parse_pricing(term);
    if (p == Pricing::reserved_1y || p == Pricing::reserved_3y) return p;
  } catch (const Error&) {
  }
  bad(what + ": term '" + printable(term) + "': 1y or 3y");
}

Reservation reservation_of(const Json& v, const std::string& what) {
  only_keys(v, {"instance", "region", "count", "from", "until", "hourly", "term", "name"}, what);
  Reservation r;
  if (!v.contains("instance")) bad(what + ": no instance");
  r.instance = string_of(v["instance"], what + ".instance", 128);
  const std::string named = what + " (" + r.instance + ")";
  if (v.contains("region")) r.region = string_of(v["region"], named + ": region", 64);
  if (v.contains("count"))
    r.count = static_cast<int>(whole(v["count"], named + ": count", 1, 100000));
  if (v.contains("from")) r.from_h = hours_of(v["from"], named + ": from");
  if (v.contains("until")) {
    r.until_h = hours_of(v["until"], named + ": until");
    if (r.until_h <= r.from_h) bad(named + ": until is not after from");
  }
  if (v.contains("hourly")) {
    if (!v["hourly"].is_number() || !std::isfinite(v["hourly"].get<double>()) ||
        v["hourly"].get<double>() < 0 || v["hourly"].get<double>() > 1e5)
      bad(named + ": hourly: expected $/h per instance in [0, 100000]");
    r.hourly = v["hourly"].get<double>();
  }
  if (v.contains("term")) r.term = term_of(string_of(v["term"], named + ": term", 8), named);
  if (v.contains("name")) r.name = word_of(v["name"], named + ": name", "._-");
  return r;
}

}  // namespace

Queue parse_queue(std::string_view text, const std::string& where) {
  const auto doc = nubo::json::parse(text, where);
  only_keys(doc, {"jobs", "reservations", "horizon", "start"}, where);
  Queue q;
  if (doc.contains("start")) q.start = utc_of(doc["start"], where + ": start");
  if (doc.contains("horizon")) {
    q.horizon_h = hours_of(doc["horizon"], where + ": horizon");
    if (!(q.horizon_h > 0))
      bad(where +
          ": horizon: a positive number of hours (leave it out to plan to the latest "
          "deadline)");
  }
  if (!doc.contains("jobs") || !doc["jobs"].is_array() || doc["jobs"].empty())
    bad(where + ": \"jobs\" must be a list of at least one job");
  if (doc["jobs"].size() > kMaxJobs)
    bad(where + ": " + std::to_string(doc["jobs"].size()) + " jobs; at most " +
        std::to_string(kMaxJobs));
  const auto base_dir = directory_of(where);
  std::set<std::string> names;
  for (std::size_t i = 0; i < doc["jobs"].size(); ++i) {
    auto j = job_of(doc["jobs"][i], where + ": jobs[" + std::to_string(i) + "]", base_dir);
    if (!names.insert(j.name).second) bad(where + ": job '" + j.name + "' appears twice");
    q.jobs.push_back(std::move(j));
  }
  if (doc.contains("reservations")) {
    const auto& rs = doc["reservations"];
    if (!rs.is_array()) bad(where + ": \"reservations\" must be a list");
    if (rs.size() > kMaxReservations) bad(where + ": more than 1000 reservations");
    for (std::size_t i = 0; i < rs.size(); ++i)
      q.reservations.push_back(reservation_of(rs[i], "reservations[" + std::to_string(i) + "]"));
  }
  return q;
}

Queue load_queue(const std::string& path) {
  const auto file = files::read_small_file(path, 64 << 20, "queue file");
  return parse_queue(file.bytes, path);
}

QueueUpdate load_queue_update(const std::string& path) {
  const auto file = files::read_small_file(path, 64 << 20, "queue update");
  return parse_queue_update(file.bytes, path);
}

Reservation parse_reservation(std::string_view spec) {
  const std::string s(spec);
  const auto what = "--reserve '" + printable(s.substr(0, 100)) + "'";
  const auto eq = s.find('='), colon = s.rfind(':');
  if (eq == std::string::npos || eq == 0 || colon == std::string::npos || colon < eq)
    bad(what + ": expected INSTANCE[@REGION]=COUNT:TERM, e.g. p4d.24xlarge=1:1y");
  Reservation r;
  r.instance = s.substr(0, eq);
  if (const auto at = r.instance.find('@'); at != std::string::npos) {
    r.region = r.instance.substr(at + 1);
    r.instance.resize(at);
  }
  if (r.instance.empty()) bad(what + ": no instance");
  const double count =
      text::parse_double(s.substr(eq + 1, colon - eq - 1), what + ": count", 1, 100000);
  if (count != std::floor(count)) bad(what + ": the count must be a whole number");
  r.count = static_cast<int>(count);
  r.term = term_of(s.substr(colon + 1), what);
  return r;
}

QueueUpdate parse_queue_update(std::string_view text, const std::string& where) {
  const auto doc = nubo::json::parse(text, where);
  only_keys(doc, {"now", "jobs"}, where);
  QueueUpdate u;
  if (!doc.contains("now")) bad(where + ": \"now\" (hours since the queue's start) is needed");
  u.now_h = hours_of(doc["now"], where + ": now");
  if (doc.contains("jobs")) {
    if (!doc["jobs"].is_array()) bad(where + ": \"jobs\" must be a list");
    const auto base_dir = directory_of(where);
    for (std::size_t i = 0; i < doc["jobs"].size(); ++i) {
      const auto& v = doc["jobs"][i];
      const auto what = where + ": jobs[" + std::to_string(i) + "]";
      only_keys(v, {"name", "state", "started", "runtime", "progress", "profile"}, what);
      JobUpdate j;
      if (!v.contains("name")) bad(what + ": no name");
      j.job = string_of(v["name"], what + ".name", 64);
      const std::string named = "job '" + j.job + "'";
      const auto state = v.contains("state") ? string_of(v["state"], named + ": state", 16) : "";
      if (state == "finished")
        j.state = JobUpdate::State::finished;
      else if (state == "failed")
        j.state = JobUpdate::State::failed;
      else if (state == "running")
        j.state = JobUpdate::State::running;
      else
        bad(named + ": state '" + printable(state) + "': finished, failed or running");
      if (v.contains("started")) j.started_h = hours_of(v["started"], named + ": started");
      if (j.started_h > u.now_h) bad(named + ": started after now");
      if (v.contains("runtime")) j.runtime_h = hours_of(v["runtime"], named + ": runtime");
      if (v.contains("progress")) {
        if (!v["progress"].is_number() || !(v["progress"].get<double>() > 0) ||
            v["progress"].get<double>() > 1)
          bad(named + ": progress: expected a fraction in (0, 1]");
        j.progress = v["progress"].get<double>();
      }
      if (j.state == JobUpdate::State::running && j.progress <= 0)
        bad(named + ": a running job needs its progress (a fraction in (0, 1])");
      // Its end is projected from the rate so far: a fraction so small that the end falls past
      // what a queue can plan is a typo, not a job.
      if (j.progress > 0 && !(j.started_h + (u.now_h - j.started_h) / j.progress <= kMaxHours))
        bad(named + ": progress " + v["progress"].dump() + " after " +
            hours_text(u.now_h - j.started_h) + " would end it past " + hours_text(kMaxHours) +
            " from the start");
      if (v.contains("profile")) {
        auto path = string_of(v["profile"], named + ": profile", 4096);
        if (!path.empty() && path.front() != '/') path = base_dir + path;
        j.profile = Profile::load(path);
      }
      u.jobs.push_back(std::move(j));
    }
  }
  return u;
}

}  // namespace nubo::cost
