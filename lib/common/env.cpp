#include "common/env.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common/text.hpp"
#include "nubo/env.hpp"
#include "nubo/error.hpp"

namespace nubo::env {
namespace {

[[noreturn]] void bad_value(const char* name, const std::string& value, const char* accepts) {
  throw Error(Errc::invalid_argument,
              std::string(name) + "='" + value + "' is not valid; " + name + " accepts " + accepts);
}

std::optional<std::string> non_empty(const char* name) {
  auto v = get(name);
  if (v && text::trim(*v).empty()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

LogLevel log_level() {
  auto v = get("NUBO_LOG");
  if (!v) return LogLevel::warn;
  auto s = text::lower(text::trim(*v));
  if (s == "error") return LogLevel::error;
  if (s == "warn" || s == "warning") return LogLevel::warn;
  if (s == "info") return LogLevel::info;
  if (s == "debug") return LogLevel::debug;
  bad_value("NUBO_LOG", *v, "error, warn, info or debug (unset, warn)");
}

std::optional<std::string> sim_devices() {
  return non_empty("NUBO_SIM_DEVICES");
}

std::optional<std::string> sim_topology() {
  return non_empty("NUBO_SIM_TOPOLOGY");
}

std::optional<std::string> cuda_plugin() {
  return non_empty("NUBO_CUDA_PLUGIN");
}

bool cuda_enabled() {
  auto v = get("NUBO_CUDA");
  if (!v || v->empty()) return true;
  auto s = text::trim(*v);
  if (s == "1") return true;
  if (s == "0") return false;
  bad_value("NUBO_CUDA", *v, "0 (skip the CUDA probe) or 1");
}

std::optional<std::string> cuda_visible_devices() {
  return get("CUDA_VISIBLE_DEVICES");
}

DeviceOrder cuda_device_order() {
  auto v = get("CUDA_DEVICE_ORDER");
  if (!v || v->empty()) return DeviceOrder::pci_bus_id;
  auto s = text::trim(*v);
  if (s == "PCI_BUS_ID") return DeviceOrder::pci_bus_id;
  if (s == "FASTEST_FIRST") return DeviceOrder::fastest_first;
  bad_value("CUDA_DEVICE_ORDER", *v, "PCI_BUS_ID or FASTEST_FIRST");
}

std::optional<Job> job() {
  auto rank = non_empty("NUBO_RANK");
  auto local_rank = non_empty("NUBO_LOCAL_RANK");
  auto world_size = non_empty("NUBO_WORLD_SIZE");
  auto rendezvous = non_empty("NUBO_RENDEZVOUS");
  auto local_world = non_empty("NUBO_LOCAL_WORLD_SIZE");
  if (!rank && !local_rank && !world_size && !rendezvous) return std::nullopt;
  std::vector<std::string> missing;
  if (!rank) missing.emplace_back("NUBO_RANK");
  if (!world_size) missing.emplace_back("NUBO_WORLD_SIZE");
  if (!rendezvous) missing.emplace_back("NUBO_RENDEZVOUS");
  if (!missing.empty()) {
    throw Error(Errc::invalid_argument,
                "a nubo job needs NUBO_RANK, NUBO_WORLD_SIZE and NUBO_RENDEZVOUS, but " +
                    text::join(missing, ", ") + (missing.size() == 1 ? " is" : " are") +
                    " not set: start the program with nubo-run, or set all of them");
  }
  // A job of more than 65536 processes is far beyond what a file or Redis rendezvous serves.
  constexpr std::int64_t kMaxWorld = 65536;
  Job j;
  j.world_size = static_cast<int>(text::parse_int(*world_size, "NUBO_WORLD_SIZE", 1, kMaxWorld));
  j.rank = static_cast<int>(text::parse_int(*rank, "NUBO_RANK", 0, kMaxWorld - 1));
  j.local_rank =
      local_rank
          ? static_cast<int>(text::parse_int(*local_rank, "NUBO_LOCAL_RANK", 0, kMaxWorld - 1))
          : j.rank;
  if (j.rank >= j.world_size) {
    throw Error(Errc::invalid_argument,
                "NUBO_RANK=" + std::to_string(j.rank) + " is not below NUBO_WORLD_SIZE=" +
                    std::to_string(j.world_size) + ": ranks count from 0 to NUBO_WORLD_SIZE - 1");
  }
  if (local_world) {
    j.local_world_size =
        static_cast<int>(text::parse_int(*local_world, "NUBO_LOCAL_WORLD_SIZE", 1, j.world_size));
    if (j.local_rank >= j.local_world_size)
      throw Error(Errc::invalid_argument,
                  "NUBO_LOCAL_RANK=" + std::to_string(j.local_rank) +
                      " is not below NUBO_LOCAL_WORLD_SIZE=" + std::to_string(j.local_world_size));
  }
  j.rendezvous = std::string(text::trim(*rendezvous));
  return j;
}

double checkpoint_delay_s() {
  auto v = non_empty("NUBO_CHECKPOINT_DELAY");
  if (!v) return 0;
  try {
    return text::parse_double(*v, "NUBO_CHECKPOINT_DELAY", 0.0, 3600.0);
  } catch (const Error&) {
    bad_value("NUBO_CHECKPOINT_DELAY", *v, "a number of seconds in [0, 3600], e.g. 0.5");
  }
}

std::optional<double> store_timeout_s() {
  auto v = non_empty("NUBO_S3_TIMEOUT");
  if (!v) return std::nullopt;
  try {
    const double s = text::parse_double(*v, "NUBO_S3_TIMEOUT", 0.0, 3600.0);
    if (s > 0) return s;
  } catch (const Error&) {
  }
  bad_value("NUBO_S3_TIMEOUT", *v, "a number of seconds above 0, at most 3600");
}

std::optional<std::string> gs_endpoint() {
  auto v = non_empty("NUBO_GS_ENDPOINT_URL");
  if (!v) return std::nullopt;
  std::string url(text::trim(*v));
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    bad_value("NUBO_GS_ENDPOINT_URL", *v, "http://HOST[:PORT] or https://HOST[:PORT]");
  return url;
}

std::optional<std::chrono::milliseconds> timeout() {
  auto v = non_empty("NUBO_TIMEOUT");
  if (!v) return std::nullopt;
  double seconds = 0;
  try {
    seconds = text::parse_double(*v, "NUBO_TIMEOUT", 0.0, 86400.0);
  } catch (const Error&) {
    bad_value("NUBO_TIMEOUT", *v, "a number of seconds in (0, 86400], e.g. 60 or 2.5");
  }
  if (seconds <= 0) bad_value("NUBO_TIMEOUT", *v, "a number of seconds in (0, 86400], e.g. 60");
  // At least a millisecond: a tiny value must not round to "no time at all".
  return std::chrono::milliseconds(
      std::max<std::int64_t>(1, static_cast<std::int64_t>(seconds * 1000.0 + 0.5)));
}

std::optional<std::string> host_id() {
  auto v = non_empty("NUBO_HOST_ID");
  if (!v) return std::nullopt;
  return std::string(text::trim(*v));
}

std::optional<std::string> address() {
  auto v = non_empty("NUBO_ADDRESS");
  if (!v) return std::nullopt;
  return std::string(text::trim(*v));
}

std::optional<std::string> token() {
  return non_empty("NUBO_TOKEN");
}

namespace {

// A variable that is 0 or 1; `fallback` when unset or empty.
bool switch_var(const char* name, bool fallback, const char* accepted) {
  auto v = get(name);
  if (!v || text::trim(*v).empty()) return fallback;
  auto s = text::trim(*v);
  if (s == "1") return true;
  if (s == "0") return false;
  bad_value(name, *v, accepted);
}

}  // namespace

bool autotune_enabled() {
  return switch_var("NUBO_AUTOTUNE", true, "0 (no tuning) or 1");
}

bool shm_disabled() {
  return switch_var("NUBO_SHM_DISABLE", false, "0 (shared memory on one host) or 1 (Gloo)");
}

bool cpu_bind() {
  return switch_var("NUBO_CPU_BIND", false, "0 (workers float) or 1 (each pinned to its cores)");
}

std::optional<BlasThreads> blas_threads() {
  for (const char* name : {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"}) {
    auto v = non_empty(name);
    if (!v) continue;
    // OpenMP allows a list ("4,2": nested levels); the first is the outer level's.
    auto first = text::trim(text::split(*v, ',').front());
    return BlasThreads{name, static_cast<int>(text::parse_int(first, name, 1, 4096))};
  }
  return std::nullopt;
}

namespace {

// nubo's folder in the user's cache: $XDG_CACHE_HOME/nubo, else $HOME/.cache/nubo, else "".
std::string nubo_cache_home() {
  if (auto x = non_empty("XDG_CACHE_HOME")) return *x + "/nubo";
  if (auto h = non_empty("HOME")) return *h + "/.cache/nubo";
  return "";
}

}  // namespace

std::string autotune_cache_path() {
  if (auto v = non_empty("NUBO_AUTOTUNE_CACHE")) return std::string(text::trim(*v));
  const auto home = nubo_cache_home();
  return home.empty() ? home : home + "/autotune.json";
}

std::string catalog_cache_dir() {
  if (auto v = non_empty("NUBO_CATALOG_CACHE")) return std::string(text::trim(*v));
  const auto home = nubo_cache_home();
  return home.empty() ? home : home + "/catalog";
}

std::string skypilot_catalog_dir() {
  if (auto h = non_empty("HOME")) return *h + "/.sky/catalogs";
  return "";
}

std::optional<std::string> catalog_url(std::string_view source_name) {
  std::string variable = "NUBO_CATALOG_URL_";
  for (char c : source_name)
    variable += std::isalnum(static_cast<unsigned char>(c))
                    ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                    : '_';
  if (auto v = non_empty(variable.c_str())) return std::string(text::trim(*v));
  return std::nullopt;
}

}  // namespace nubo::env

namespace nubo {

void check_environment() {
  env::log_level();
  env::cuda_enabled();
  env::cuda_device_order();
  env::job();
  env::timeout();
  env::checkpoint_delay_s();
  env::store_timeout_s();
  env::gs_endpoint();
  env::autotune_enabled();
  env::shm_disabled();
  env::cpu_bind();
  env::blas_threads();
}

}  // namespace nubo
