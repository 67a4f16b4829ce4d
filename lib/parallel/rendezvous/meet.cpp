#include "parallel/rendezvous/meet.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "common/env.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::parallel {
namespace {

constexpr const char* kMagic = "nubo-process 1";

std::string seconds_text(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::vector<std::string> names;
  for (int r : ranks) {
    if (names.size() == 8) {
      names.push_back("and " + std::to_string(ranks.size() - 8) + " more");
      break;
    }
    names.push_back(std::to_string(r));
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + text::join(names, ", ");
}

}  // namespace

std::string process_name(int p, int workers) {
  if (workers == 1) return "rank " + std::to_string(p);
  const int first = p * workers;
  return "process " + std::to_string(p) + " (ranks " + std::to_string(first) + " to " +
         std::to_string(first + workers - 1) + ")";
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string host_identity() {
  if (auto id = env::host_id()) return *id;
  // The boot id tells apart machines that share a host name; the host name, containers that
  // share a kernel.
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(in, boot);
  return std::string(text::trim(boot)) + "/" + host_name();
}

std::string encode(const ProcessInfo& info) {
  return std::string(kMagic) + "\nworld " + std::to_string(info.world_size) + "\nlocal " +
         std::to_string(info.local_size) + "\nhost " + info.host + "\nhostid " + info.host_id +
         "\npid " + std::to_string(info.pid) + "\n";
}

ProcessInfo decode(const std::string& record, int rank, const std::string& where) {
  const std::string what = "rank " + std::to_string(rank) + "'s record in " + where;
  auto bad = [&](const std::string& problem) -> Error {
    return Error(Errc::corrupt, what + " is not a nubo process record (" + problem +
                                    "): is the rendezvous shared with another job?");
  };
  auto lines = text::split(record, '\n');
  if (lines.empty() || lines[0] != kMagic)
    throw bad("it does not start with '" + std::string(kMagic) + "'");
  ProcessInfo info;
  bool have_world = false, have_local = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto line = lines[i];
    if (line.empty()) continue;
    auto space = line.find(' ');
    if (space == std::string_view::npos)
      throw bad("line " + std::to_string(i + 1) + " has no value");
    auto key = line.substr(0, space);
    auto value = line.substr(space + 1);
    try {
      if (key == "world") {
        info.world_size = static_cast<int>(text::parse_int(value, "world", 1, 65536));
        have_world = true;
      } else if (key == "local") {
        info.local_size = static_cast<int>(text::parse_int(value, "local", 1, 65536));
        have_local = true;
      } else if (key == "host") {
        info.host = std::string(value.substr(0, 255));
      } else if (key == "hostid") {
        info.host_id = std::string(value.substr(0, 512));
      } else if (key == "pid") {
        info.pid = static_cast<long>(text::parse_int(value, "pid", 0, INT64_MAX));
      }  // unknown keys: a newer nubo's additions, ignored
    } catch (const Error& e) {
      throw bad(e.what());
    }
  }
  if (!have_world || !have_local) throw bad("the world or local line is missing");
  return info;
}

std::vector<ProcessInfo> meet(Store& store, int rank, const ProcessInfo& me,
                              std::chrono::milliseconds timeout) {
  const int world = me.world_size;
  store.set("proc/" + std::to_string(rank), encode(me));
  std::vector<ProcessInfo> all(static_cast<std::size_t>(world));
  all[static_cast<std::size_t>(rank)] = me;
  std::vector<int> missing;
  for (int r = 0; r < world; ++r) {
    if (r != rank) missing.push_back(r);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (!missing.empty()) {
    std::vector<int> still;
    for (int r : missing) {
      auto record = store.try_get("proc/" + std::to_string(r));
      if (!record) {
        still.push_back(r);
        continue;
      }
      ProcessInfo info = decode(*record, r, store.describe());
      if (info.world_size != world) {
        throw Error(Errc::invalid_argument,
                    "the processes disagree on the world size: rank " + std::to_string(r) +
                        " has NUBO_WORLD_SIZE=" + std::to_string(info.world_size) + " but rank " +
                        std::to_string(rank) + " (this process) has " + std::to_string(world) +
                        "; start every process of the job with the same NUBO_WORLD_SIZE");
      }
      if (info.local_size != me.local_size) {
        throw Error(Errc::invalid_argument,
                    "the processes hold different numbers of devices: rank " + std::to_string(r) +
                        " holds " + std::to_string(info.local_size) + " but rank " +
                        std::to_string(rank) + " (this process) holds " +
                        std::to_string(me.local_size) +
                        "; every process of a job must hold the same number of devices");
      }
      all[static_cast<std::size_t>(r)] = std::move(info);
    }
    missing = std::move(still);
    if (missing.empty()) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      throw Error(Errc::timeout, "joining the job at " + store.describe() + " timed out after " +
                                     seconds_text(timeout) + ": " + ranks_text(missing) + " of " +
                                     std::to_string(world) +
                                     " never arrived (were they started, with the same "
                                     "NUBO_RENDEZVOUS and NUBO_WORLD_SIZE=" +
                                     std::to_string(world) + "?)");
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  return all;
}

}  // namespace nubo::parallel
