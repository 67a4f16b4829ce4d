// A job of peer processes (tests/parallel/peer.cpp) started with the variables nubo-run sets,
// for the tests that run several processes.
#pragma once

#include <sys/wait.h>
#include <catch2/catch.hpp>

#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include "process_helpers.hpp"

namespace nubo::test {

struct Job {
  TempDir dir;
  std::vector<Child> procs;

  // Starts n peers "peer ARGS..." in a job at `rendezvous`; per_rank(r) adds variables.
  Job(int n, const std::string& rendezvous, const std::vector<std::string>& args,
      std::vector<std::string> extra_env = {},
      std::function<std::vector<std::string>(int)> per_rank = {}) {
    for (int r = 0; r < n; ++r) {
      std::vector<std::string> argv{NUBO_PEER_PATH};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<std::string> env{"NUBO_RANK=" + std::to_string(r),
                                   "NUBO_LOCAL_RANK=" + std::to_string(r),
                                   "NUBO_WORLD_SIZE=" + std::to_string(n),
                                   "NUBO_RENDEZVOUS=" + rendezvous,
                                   "NUBO_SIM_DEVICES=",
                                   "NUBO_TIMEOUT=30"};
      env.insert(env.end(), extra_env.begin(), extra_env.end());
      if (per_rank) {
        auto more = per_rank(r);
        env.insert(env.end(), more.begin(), more.end());
      }
      procs.emplace_back(argv, env, dir.path + "/out." + std::to_string(r));
    }
  }

  // Waits for every process (each within `timeout`); a process still running then is killed
  // and reported.
  std::vector<int> finish(std::chrono::milliseconds timeout) {
    using namespace std::chrono_literals;
    std::vector<int> statuses;
    for (std::size_t r = 0; r < procs.size(); ++r) {
      auto st = procs[r].wait(timeout);
      if (!st) {
        procs[r].signal(SIGKILL);
        st = procs[r].wait(5s);
        FAIL_CHECK("rank " << r << " did not finish in time; its output:\n" << procs[r].output());
      }
      statuses.push_back(st.value_or(-1));
    }
    return statuses;
  }

  std::string file_url() const { return "file://" + dir.path + "/rendezvous"; }
};

inline void require_success(Job& job, const std::vector<int>& statuses) {
  for (std::size_t r = 0; r < statuses.size(); ++r) {
    INFO("rank " << r << " " << status_text(statuses[r]) << "; output:\n" << job.procs[r].output());
    CHECK((WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == 0));
  }
}

inline std::string file_rendezvous(TempDir& dir) {
  return "file://" + dir.path + "/rendezvous";
}

}  // namespace nubo::test
