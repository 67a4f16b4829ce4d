// Teams and workers in C: creating a team, running a C function on its workers, and what a
// worker knows about itself.
#include <cstring>
#include <string>

#include "generated/options.hpp"
#include "nubo_parallel.h"
#include "parallel_handles.hpp"
#include "report.hpp"
#include "sized_struct.hpp"
#include "text_out.hpp"

namespace nubo::capi {
namespace {

template <class E>
int bytes_of(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int v = 0;
  std::memcpy(&v, &e, sizeof v);
  return v;
}
}  // namespace

DType to_dtype(const nubo_dtype& type) {
  const int v = bytes_of(type);
  if (v == NUBO_DTYPE_TF32)
    throw Error(Errc::invalid_argument,
                "type NUBO_DTYPE_TF32 is a compute precision, not an element type a buffer "
                "holds: use F32, F16, BF16, I32 or I64");
  if (v < 0 || dtype_size(static_cast<DType>(v)) == 0) {
    throw Error(Errc::invalid_argument,
                "type " + std::to_string(v) + " is not a nubo_dtype (F32, F16, BF16, I32, I64)");
  }
  return static_cast<DType>(v);
}

ReduceOp to_op(const nubo_reduce_op& op) {
  const int v = bytes_of(op);
  if (v < 0 || reduce_op_name(static_cast<ReduceOp>(v)) == "unknown") {
    throw Error(Errc::invalid_argument,
                "op " + std::to_string(v) + " is not a nubo_reduce_op (SUM, AVG, MAX, MIN)");
  }
  return static_cast<ReduceOp>(v);
}

Transpose to_transpose(const nubo_transpose& t, const char* name) {
  const int v = bytes_of(t);
  if (v != NUBO_TRANSPOSE_NO && v != NUBO_TRANSPOSE_YES) {
    throw Error(Errc::invalid_argument, std::string(name) + " is " + std::to_string(v) +
                                            ", not a nubo_transpose (NO or YES)");
  }
  return v == NUBO_TRANSPOSE_YES ? Transpose::yes : Transpose::no;
}

int raw_value(const nubo_status& status) {
  return bytes_of(status);
}

}  // namespace nubo::capi

using namespace nubo::capi;

extern "C" {

NUBO_C_API nubo_status nubo_team_options_init(nubo_team_options* options, size_t struct_size) {
  return guard("nubo_team_options_init",
               [&] { init_options(require(options, "options"), struct_size); });
}

NUBO_C_API nubo_status nubo_team_create(const nubo_device_report* report, const size_t* indices,
                                        size_t count, const nubo_team_options* options,
                                        nubo_team** out) {
  return guard("nubo_team_create", [&] {
    require(out, "out");
    *out = nullptr;
    const Report& r = require_report(report);
    if (count == 0) throw nubo::Error(nubo::Errc::invalid_argument, "count is 0");
    require(indices, "indices");
    std::vector<nubo::Device> devices;
    for (size_t i = 0; i < count; ++i) {
      if (indices[i] >= r.report.devices.size()) {
        throw nubo::Error(nubo::Errc::invalid_argument,
                          "indices[" + std::to_string(i) + "] is " + std::to_string(indices[i]) +
                              ": the report has " + std::to_string(r.report.devices.size()) +
                              " devices");
      }
      devices.push_back(r.report.devices[indices[i]]);
    }
    auto handle = std::make_unique<TeamHandle>(nubo::Team(devices, read_options(options)));
    *out = to_handle(handle.release());
  });
}

NUBO_C_API nubo_status nubo_team_create_host(size_t workers, const nubo_team_options* options,
                                             nubo_team** out) {
  return guard("nubo_team_create_host", [&] {
    require(out, "out");
    *out = nullptr;
    if (workers == 0 || workers > 1024) {
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "workers is " + std::to_string(workers) + ": use 1 to 1024");
    }
    auto handle = std::make_unique<TeamHandle>(
        nubo::Team::host(static_cast<int>(workers), read_options(options)));
    *out = to_handle(handle.release());
  });
}

NUBO_C_API nubo_status nubo_team_from_env(const nubo_team_options* options, nubo_team** out) {
  return guard("nubo_team_from_env", [&] {
    require(out, "out");
    *out = nullptr;
    auto handle = std::make_unique<TeamHandle>(nubo::Team::from_env(read_options(options)));
    *out = to_handle(handle.release());
  });
}

NUBO_C_API nubo_status nubo_team_join(const nubo_team_options* options, nubo_team** out) {
  return guard("nubo_team_join", [&] {
    require(out, "out");
    *out = nullptr;
    auto handle = std::make_unique<TeamHandle>(nubo::Team::join(read_options(options)));
    *out = to_handle(handle.release());
  });
}

NUBO_C_API nubo_status nubo_team_worker(nubo_team* team, int local_rank, nubo_worker** out) {
  return guard("nubo_team_worker", [&] {
    require(out, "out");
    *out = nullptr;
    *out = to_handle(&require_team(team).team.worker(local_rank));
  });
}

NUBO_C_API void nubo_team_free(nubo_team* team) {
  delete reinterpret_cast<TeamHandle*>(team);
}

NUBO_C_API int nubo_team_size(const nubo_team* team) {
  return team ? team_of(team)->team.size() : 0;
}

NUBO_C_API int nubo_team_local_size(const nubo_team* team) {
  return team ? team_of(team)->team.local_size() : 0;
}

NUBO_C_API nubo_status nubo_team_describe(const nubo_team* team, char* buf, size_t capacity,
                                          size_t* needed) {
  return guard("nubo_team_describe", [&] {
    copy_text_out(team_of(require(team, "team"))->team.describe(), "the description", buf, capacity,
                  needed);
  });
}

NUBO_C_API nubo_status nubo_team_run(nubo_team* team, nubo_worker_fn fn, void* user) {
  return guard("nubo_team_run", [&] {
    TeamHandle& t = require_team(team);
    require(reinterpret_cast<void*>(fn), "fn");
    t.team.run([&](nubo::Worker& w) {
      const std::string before = nubo_last_error();
      const nubo_status s = fn(to_handle(&w), user);
      const int code = raw_value(s);  // the callback may return any int
      if (code == NUBO_OK) return;
      // The message of this callback's failure: what it left in this thread's last error.
      const std::string after = nubo_last_error();
      std::string message = after != before && !after.empty()
                                ? after
                                : "the worker function returned status " + std::to_string(code) +
                                      " without a message";
      const auto errc = code > 0 && code <= NUBO_ERR_INTERNAL ? static_cast<nubo::Errc>(code)
                                                              : nubo::Errc::internal;
      const std::string rank = "rank " + std::to_string(w.rank()) + ": ";
      if (message.rfind(rank, 0) != 0) message = rank + message;
      throw nubo::Error(errc, message);
    });
  });
}

NUBO_C_API nubo_status nubo_worker_fail(nubo_worker* worker, nubo_status status,
                                        const char* message) {
  if (raw_value(status) == NUBO_OK) return NUBO_OK;
  // Recorded as "rank R: message", which nubo_team_run passes on as it is.
  std::string who = "worker";
  if (worker) who = "rank " + std::to_string(reinterpret_cast<const nubo::Worker*>(worker)->rank());
  return fail(status, who.c_str(), message ? message : "(no message)");
}

NUBO_C_API nubo_status nubo_worker_get_info(const nubo_worker* worker, nubo_worker_info* out) {
  return guard("nubo_worker_get_info", [&] {
    const nubo::Worker& w = require_worker(worker);
    require(out, "out");
    nubo_worker_info info{};
    info.rank = w.rank();
    info.size = w.size();
    info.local_rank = w.local_rank();
    info.local_size = w.local_size();
    info.backend = static_cast<nubo_backend>(w.device().backend);
    info.device_index = w.device().backend == nubo::Backend::host ? 0 : w.device().index;
    info.device_name = w.device().name.c_str();
    info.host_threads = w.host_threads();
    info.cpus = w.cpus().empty() ? nullptr : w.cpus().data();
    info.cpu_count = w.cpus().size();
    write_sized(info, out, "out", "nubo_worker_info");
  });
}

NUBO_C_API nubo_status nubo_worker_shard(const nubo_worker* worker, size_t n, size_t* begin,
                                         size_t* count) {
  return guard("nubo_worker_shard", [&] {
    const nubo::Worker& w = require_worker(worker);
    require(begin, "begin");
    require(count, "count");
    const nubo::Shard s = w.shard(n);
    *begin = s.begin;
    *count = s.count;
  });
}

}  // extern "C"
