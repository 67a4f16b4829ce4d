// nubo-run as a user runs it: the job's variables, rank-prefixed output, a process that dies
// (named, with how it died), a process that fails, signals passed on, and bad flags.
#include <catch2/catch.hpp>

#include "skip.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <thread>

#include "device/host/host_cores.hpp"
#include "parallel/links/gloo_link.hpp"
#include "process_helpers.hpp"

using namespace nubo::test;
using namespace std::chrono_literals;

namespace {

struct Run {
  TempDir dir;
  std::unique_ptr<Child> child;
  int status = -1;

  explicit Run(std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.insert(args.begin(), NUBO_RUN_PATH);
    env.push_back("NUBO_SIM_DEVICES=");
    child = std::make_unique<Child>(args, env, dir.path + "/out");
  }
  int finish() {
    auto st = child->wait(90s);
    if (!st) {
      child->signal(SIGKILL);
      child->wait(5s);
      FAIL("nubo-run did not finish; its output:\n" << child->output());
    }
    status = *st;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
  }
  std::string output() const { return child->output(); }
};

}  // namespace

TEST_CASE("nubo-run gives each process its rank and prefixes its lines") {
  Run run({"--nproc", "3", "--", "sh", "-c",
           "echo \"$NUBO_RANK $NUBO_LOCAL_RANK $NUBO_WORLD_SIZE $NUBO_RENDEZVOUS\"; printf tail"});
  CHECK(run.finish() == 0);
  const auto out = run.output();
  INFO(out);
  CHECK_THAT(out, Catch::Contains("[0] 0 0 3 file:///") && Catch::Contains("[1] 1 1 3 file:///") &&
                      Catch::Contains("[2] 2 2 3 file:///") && Catch::Contains("[2] tail\n"));
}

TEST_CASE("nubo-run numbers the ranks of a node in a job of several nodes") {
  TempDir shared;
  Run run({"--nproc", "2", "--nnodes", "2", "--node-rank", "1", "--rendezvous",
           "file://" + shared.path, "--job-id", "j1", "--", "sh", "-c",
           "echo \"$NUBO_RANK/$NUBO_WORLD_SIZE local $NUBO_LOCAL_RANK at $NUBO_RENDEZVOUS\""});
  CHECK(run.finish() == 0);
  const auto out = run.output();
  INFO(out);
  CHECK_THAT(out, Catch::Contains("[2] 2/4 local 0 at file://" + shared.path + "/j1") &&
                      Catch::Contains("[3] 3/4 local 1 at file://" + shared.path + "/j1"));
}

TEST_CASE("nubo-run sets torchrun's variables and each process's share of the CPUs") {
  const std::string echo =
      "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $NUBO_LOCAL_WORLD_SIZE "
      "$MASTER_ADDR:$MASTER_PORT threads=$OMP_NUM_THREADS,$OPENBLAS_NUM_THREADS "
      "bind=$NUBO_CPU_BIND\"";
  {
    Run run({"--nproc", "2", "--cpu-bind", "--", "sh", "-c", echo});
    CHECK(run.finish() == 0);
    const auto out = run.output();
    INFO(out);
    const int cpus = static_cast<int>(nubo::detail::allowed_cores().size());
    const std::string t = std::to_string(std::max(1, cpus / 2));
    CHECK_THAT(out, Catch::Contains("[0] 0 0 2 2 2 127.0.0.1:") &&
                        Catch::Contains("[1] 1 1 2 2 2 127.0.0.1:") &&
                        Catch::Contains("threads=" + t + "," + t + " bind=1"));
    // Said once, at the start: the threads and the transport between the processes.
    CHECK_THAT(out, Catch::Contains("nubo-run: 2 processes on this node (ranks 0-1 of 2), " + t +
                                    (t == "1" ? " thread" : " threads") + " each (") &&
                        Catch::Contains("shm between this node's processes"));
  }
  {
    // The user's thread count is kept; one process by default on a machine without GPUs.
    Run run({"--", "sh", "-c", echo}, {"OMP_NUM_THREADS=3", "OPENBLAS_NUM_THREADS="});
    CHECK(run.finish() == 0);
    const auto out = run.output();
    INFO(out);
    CHECK_THAT(out, Catch::Contains("[0] 0 0 1 1 1 127.0.0.1:") &&
                        Catch::Contains("threads=3, bind=") &&
                        Catch::Contains("the thread counts you set"));
  }
}

TEST_CASE("nubo-run across two nodes meets at rank 0's store, with no shared folder") {
  if (!nubo::parallel::have_gloo()) NUBO_SKIP("this build has no Gloo: no teams across hosts");
  // Two "nodes" on this machine, each its own host for nubo (NUBO_HOST_ID) with its own
  // loopback address: shared memory inside each, Gloo between them, a tcp:// rendezvous.
  const std::string port = std::to_string(free_port());
  auto node = [&](int n) {
    return std::make_unique<Run>(
        std::vector<std::string>{"--nproc", "2", "--nnodes", "2", "--node-rank", std::to_string(n),
                                 "--master-addr", "127.0.0.1", "--master-port", port, "--",
                                 NUBO_PEER_PATH, "collectives", "1", "2,2"},
        std::vector<std::string>{"NUBO_HOST_ID=node" + std::to_string(n),
                                 "NUBO_ADDRESS=127.0.0." + std::to_string(n + 2),
                                 "NUBO_TIMEOUT=60"});
  };
  auto node0 = node(0), node1 = node(1);
  CHECK(node0->finish() == 0);
  CHECK(node1->finish() == 0);
  INFO(node0->output() << "\n---\n" << node1->output());
  CHECK_THAT(node0->output(), Catch::Contains("rank 0 of 4 (nubo-run): 1 workers of 4 checked") &&
                                  Catch::Contains("Gloo/TCP between nodes"));
  CHECK_THAT(node1->output(), Catch::Contains("rank 3 of 4 (nubo-run): 1 workers of 4 checked"));
}

TEST_CASE("a torch.distributed script runs under nubo-run unchanged") {
  // Debian's python3-torch (.ci/install-deps) belongs to /usr/bin/python3.
  if (std::system("/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null") != 0) {
    NUBO_SKIP("PyTorch is not installed for /usr/bin/python3 (Debian python3-torch)");
  }
  const std::string script =
      "import torch, torch.distributed as dist\n"
      "dist.init_process_group('gloo')\n"
      "t = torch.tensor([float(dist.get_rank() + 1)])\n"
      "dist.all_reduce(t)\n"
      "print('rank', dist.get_rank(), 'of', dist.get_world_size(), 'sum', int(t.item()))\n"
      "dist.destroy_process_group()\n";
  Run run({"--nproc", "2", "--", "/usr/bin/python3", "-c", script});
  CHECK(run.finish() == 0);
  INFO(run.output());
  CHECK_THAT(run.output(),
             Catch::Contains("[0] rank 0 of 2 sum 3") && Catch::Contains("[1] rank 1 of 2 sum 3"));
}

TEST_CASE("nubo-run runs a team across processes") {
  Run run({"--nproc", "3", "--", NUBO_PEER_PATH, "join"});
  CHECK(run.finish() == 0);
  CHECK_THAT(run.output(), Catch::Contains("[1] rank 1 joined a team of 3"));
}

TEST_CASE("a process joins with Team::join() and calls its worker from its own threads") {
  Run run({"--nproc", "2", "--", NUBO_PEER_PATH, "own-loop"});
  CHECK(run.finish() == 0);
  INFO(run.output());
  CHECK_THAT(run.output(), Catch::Contains("[0] rank 0 of 2: own loop done") &&
                               Catch::Contains("[1] rank 1 of 2: own loop done"));
}

TEST_CASE("when a process dies mid all-reduce, nubo-run names it and the others fail too") {
  if (!nubo::parallel::have_gloo()) NUBO_SKIP("this build has no Gloo: no teams across processes");
  TempDir ready;
  Run run({"--nproc", "3", "--grace", "10", "--", NUBO_PEER_PATH, "loop", ready.path, "1", "5"},
          {"NUBO_TIMEOUT=20"});
  CHECK(run.finish() == 128 + SIGKILL);
  const auto out = run.output();
  INFO(out);
  CHECK_THAT(out, Catch::Contains("nubo-run: rank 1 (pid") &&
                      Catch::Contains("was killed by signal 9 (SIGKILL)") &&
                      Catch::Contains("the job failed: rank 1 was killed by signal 9"));
  // The survivors saw it themselves and said so before nubo-run had to stop them.
  CHECK_THAT(out, Catch::Contains("[0] peer rank 0: unavailable") &&
                      Catch::Contains("[2] peer rank 2: unavailable") &&
                      Catch::Contains("rank 1 is gone"));
}

TEST_CASE("when a process fails, nubo-run stops the others and exits with its status") {
  Run run({"--nproc", "2", "--grace", "0.2", "--", "sh", "-c",
           "if [ \"$NUBO_RANK\" = 1 ]; then exit 4; fi; while true; do sleep 0.05; done"});
  CHECK(run.finish() == 4);
  const auto out = run.output();
  INFO(out);
  CHECK_THAT(out, Catch::Contains("rank 1 (pid") && Catch::Contains("exited with status 4") &&
                      Catch::Contains("stopping the other processes (SIGTERM)"));
}

TEST_CASE("nubo-run passes SIGTERM on to every process") {
  Run run({"--nproc", "2", "--", "sh", "-c",
           "trap 'echo got TERM; exit 0' TERM; echo ready; while true; do sleep 0.05; done"});
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto out = run.output();
    if (out.find("[0] ready") != std::string::npos && out.find("[1] ready") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  run.child->signal(SIGTERM);
  CHECK(run.finish() == 128 + SIGTERM);
  const auto out = run.output();
  INFO(out);
  CHECK_THAT(out, Catch::Contains("[0] got TERM") && Catch::Contains("[1] got TERM") &&
                      Catch::Contains("passing signal 15 (SIGTERM) on"));
}

TEST_CASE("processes that saved their state on SIGTERM make nubo-run exit 75, not 143") {
  Run run({"--nproc", "2", "--", "sh", "-c",
           "trap 'echo saved; exit 75' TERM; echo ready; while true; do sleep 0.05; done"});
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto out = run.output();
    if (out.find("[0] ready") != std::string::npos && out.find("[1] ready") != std::string::npos)
      break;
    std::this_thread::sleep_for(10ms);
  }
  run.child->signal(SIGTERM);
  CHECK(run.finish() == 75);
  INFO(run.output());
  CHECK_THAT(run.output(), Catch::Contains("run the job again to resume"));
  // Stopping on their own with 75 is a clean stop too, not a failure.
  Run own({"--nproc", "2", "--max-restarts", "3", "--", "sh", "-c", "exit 75"});
  CHECK(own.finish() == 75);
  CHECK_THAT(own.output(), !Catch::Contains("attempt 1"));
}

TEST_CASE("nubo-run --max-restarts starts a failed job again, telling it which attempt it is") {
  Run run({"--nproc", "2", "--max-restarts", "2", "--grace", "0.2", "--", "sh", "-c",
           "echo attempt $NUBO_RESTART_COUNT $TORCHELASTIC_RESTART_COUNT; "
           "[ \"$NUBO_RESTART_COUNT\" -ge 1 ] || exit 3"});
  CHECK(run.finish() == 0);
  const auto out = run.output();
  INFO(out);
  CHECK_THAT(out, Catch::Contains("[1] attempt 0 0") && Catch::Contains("[1] attempt 1 1") &&
                      Catch::Contains("attempt 1 of 3 failed") && !Catch::Contains("attempt 2 2"));
  Run always({"--nproc", "1", "--max-restarts", "1", "--", "sh", "-c", "exit 3"});
  CHECK(always.finish() == 3);
  CHECK_THAT(always.output(), Catch::Contains("failed 2 times"));
  // Quick failures double the wait; after an attempt that ran 10 s or more, no wait at all.
  Run loop({"--nproc", "1", "--max-restarts", "3", "--", "sh", "-c",
            "case $NUBO_RESTART_COUNT in 0|1) exit 3;; 2) sleep 10.5; exit 3;; esac"});
  CHECK(loop.finish() == 0);
  CHECK_THAT(loop.output(),
             Catch::Contains("attempt 1 of 4 failed; starting the job again in 1 s") &&
                 Catch::Contains("attempt 2 of 4 failed; starting the job again in 2 s") &&
                 Catch::Contains("attempt 3 of 4 failed; starting the job again at once"));
  // A process killed by SIGKILL is an interruption from outside, not a crash: no wait, however
  // soon it came; a crash right after it waits 1 s again.
  Run killed({"--nproc", "1", "--max-restarts", "2", "--", "sh", "-c",
              "case $NUBO_RESTART_COUNT in 0) kill -KILL $$;; 1) exit 3;; esac"});
  CHECK(killed.finish() == 0);
  CHECK_THAT(killed.output(),
             Catch::Contains("attempt 1 of 3 failed; starting the job again at once") &&
                 Catch::Contains("attempt 2 of 3 failed; starting the job again in 1 s"));
  Run nodes({"--nproc", "1", "--nnodes", "2", "--master-addr", "127.0.0.1", "--max-restarts", "1",
             "--", "true"});
  CHECK(nodes.finish() == 2);
  CHECK_THAT(nodes.output(), Catch::Contains("--max-restarts"));
}

TEST_CASE("nubo-run rejects bad flags with a reason") {
  const std::pair<std::vector<std::string>, const char*> cases[] = {
      {{"--nproc", "2", "--nnodes", "2", "--node-rank", "2", "--", "true"},
       "--node-rank 2 is not below --nnodes 2"},
      {{"--nproc", "2", "--nnodes", "2", "--", "true"}, "needs --master-addr"},
      {{"--nproc", "2", "--nnodes", "2", "--master-addr", "h", "--master-port", "70000", "--",
        "true"},
       "--master-port"},
      {{"--nproc", "2", "--nnodes", "2", "--rendezvous", "redis://h:1", "--", "true"},
       "needs --job-id"},
      {{"--nproc", "2", "--rendezvous", "http://h:1", "--", "true"},
       "--rendezvous='http://h:1' is not a valid rendezvous"},
      {{"--nproc", "2", "--job-id", "a/b", "--", "true"}, "--job-id 'a/b' may hold"},
      {{"--nproc", "0", "--", "true"}, "--nproc"},
      {{"--nproc", "1", "--", "/nonexistent/program"}, "cannot start /nonexistent/program"},
  };
  for (const auto& [args, message] : cases) {
    Run run(args);
    const int code = run.finish();
    INFO(run.output());
    CHECK(code != 0);
    CHECK_THAT(run.output(), Catch::Contains(message));
  }
}
