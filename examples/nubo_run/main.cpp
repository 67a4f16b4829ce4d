// nubo-run: starts the processes of a data-parallel job and watches them.
//
//   nubo-run --nproc 4 -- ./train --epochs 3
//   nubo-run --nproc 8 --nnodes 2 --node-rank 0 --rendezvous redis://head:6379
//            --job-id run7 -- ./train
//
// Each process gets NUBO_RANK, NUBO_LOCAL_RANK, NUBO_WORLD_SIZE and NUBO_RENDEZVOUS, which
// nubo::Team::from_env() reads; see docs/parallel.md.
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <random>

#include "launcher.hpp"
#include "nubo/error.hpp"
#include "nubo/parallel.hpp"

namespace {

std::string random_job_id() {
  std::random_device rd;
  std::uniform_int_distribution<unsigned> d(0, 0xffffff);
  char buf[32];
  std::snprintf(buf, sizeof buf, "job-%d-%06x", static_cast<int>(::getpid()), d(rd));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Starts the processes of a nubo job, prefixes their output with their rank, "
      "and stops them all when one fails.",
      "nubo-run"};
  int nproc = 1, nnodes = 1, node_rank = 0;
  std::string rendezvous, job_id;
  double grace = 5.0;
  std::vector<std::string> command;
  app.add_option("--nproc,-n", nproc, "Processes on this node")
      ->required()
      ->check(CLI::Range(1, 4096));
  app.add_option("--nnodes", nnodes, "Nodes in the job (each runs nubo-run)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--node-rank", node_rank, "This node, 0 .. nnodes - 1")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--rendezvous", rendezvous,
                 "Where the processes meet: file:///shared/dir or redis://host:port "
                 "(default: a fresh temporary folder; required with --nnodes > 1)");
  app.add_option("--job-id", job_id,
                 "Names the job in the rendezvous; the same on every node (default: a fresh "
                 "one, single node only)");
  app.add_option("--grace", grace,
                 "Seconds the other processes get to finish after one fails, before SIGTERM "
                 "(and again before SIGKILL)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("command", command, "The program to run, and its arguments (after --)")
      ->required();
  app.footer(
      "Each process gets NUBO_RANK (node-rank * nproc + its index), NUBO_LOCAL_RANK, "
      "NUBO_WORLD_SIZE (nnodes * nproc) and NUBO_RENDEZVOUS. Exit status: 0 when all "
      "succeed; else the failed rank's exit status, or 128 + its signal.");
  CLI11_PARSE(app, argc, argv);

  auto fail = [](const std::string& m) {
    std::cerr << "nubo-run: " << m << "\n";
    return 2;
  };
  if (node_rank >= nnodes) {
    return fail("--node-rank " + std::to_string(node_rank) + " is not below --nnodes " +
                std::to_string(nnodes));
  }
  if (static_cast<long>(nnodes) * nproc > 65536) {
    return fail("--nnodes x --nproc is more than 65536 processes");
  }
  for (char c : job_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return fail("--job-id '" + job_id + "' may hold letters, digits, '-', '_' and '.' only");
    }
  }

  // The rendezvous: a job's own namespace inside the given location, so that keys of an
  // earlier job there are never mistaken for this one's.
  std::string made_dir;  // a folder nubo-run created, removed at the end
  try {
    if (rendezvous.empty()) {
      if (nnodes > 1) {
        return fail(
            "a job on several nodes needs --rendezvous: a folder every node shares "
            "(file:///shared/dir) or a Redis server (redis://host:6379)");
      }
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/nubo-run-XXXXXX";
      if (::mkdtemp(tmpl.data()) == nullptr) return fail("cannot create a temporary folder");
      made_dir = tmpl;
      rendezvous = "file://" + made_dir;
    } else {
      nubo::check_rendezvous(rendezvous, "--rendezvous");
      const bool redis_with_job = rendezvous.rfind("redis://", 0) == 0 &&
                                  rendezvous.find('/', 8) != std::string::npos &&
                                  rendezvous.back() != '/';
      // A tcp:// store is the job's own: rank 0 hosts it for this job only.
      const bool own_store = rendezvous.rfind("tcp://", 0) == 0;
      if (!redis_with_job && !own_store) {
        if (job_id.empty() && nnodes > 1) {
          return fail(
              "a job on several nodes needs --job-id NAME, the same on every node, so "
              "that they find each other and not an earlier job");
        }
        if (job_id.empty()) job_id = random_job_id();
        while (!rendezvous.empty() && rendezvous.back() == '/') rendezvous.pop_back();
        rendezvous += "/" + job_id;
        if (rendezvous.rfind("file://", 0) == 0 && nnodes == 1) made_dir = rendezvous.substr(7);
      }
      nubo::check_rendezvous(rendezvous, "--rendezvous with --job-id");
    }
  } catch (const nubo::Error& e) {
    return fail(e.what());
  }

  nubo::run::LaunchSpec spec;
  spec.command = command;
  spec.nproc = nproc;
  spec.node_rank = node_rank;
  spec.world_size = nnodes * nproc;
  spec.rendezvous = rendezvous;
  spec.grace = std::chrono::milliseconds(static_cast<long long>(grace * 1000));
  const int status = nubo::run::launch(spec);
  if (!made_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(made_dir, ec);
  }
  return status;
}
