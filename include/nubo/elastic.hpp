// Elastic jobs on several nodes (nubo-run --nnodes MIN:MAX; docs/parallel.md, "Elastic jobs"):
// before each attempt the nodes' launchers meet at the rendezvous and agree on who takes part,
// as torchrun's elastic agents do. A round forms when every node has come, or when at least
// MIN have and no other came within the rendezvous timeout; a node lost to a spot interruption
// is left out of the next round, and the job goes on with fewer.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "nubo/export.hpp"

namespace nubo {

struct ElasticOptions {
  int min_nodes = 1;
  int max_nodes = 1;
  // How long a round waits for more nodes once MIN have come (torchrun's
  // --rendezvous-timeout is the same idea for the whole round).
  std::chrono::milliseconds last_call{std::chrono::seconds(30)};
  // How long a node waits for MIN nodes to come at all: Error(timeout) naming how many came.
  std::chrono::milliseconds join_timeout{std::chrono::minutes(10)};
  // Waits between two looks at the store (every 100 ms); false stops the wait with
  // Error(cancelled) (nubo-run: a signal came). Empty: sleeps.
  std::function<bool(std::chrono::milliseconds)> pause;
};

struct ElasticRound {
  int round = 0;             // the same on every member; each attempt is a new round
  std::vector<int> members;  // the node ranks taking part, ascending
  int node_index = 0;        // this node's place among them: its processes' ranks start there
  int nodes() const { return static_cast<int>(members.size()); }
};

// Joins the next round at `rendezvous` (file:// or redis://: a place that outlives every node)
// as node `node_rank` (0 .. max_nodes - 1, each node its own), the first round after
// `after_round` (-1 for a node that is starting) and after every round already formed. A node
// that comes after its round formed without it waits for the next (the job re-forms when it
// next restarts). Throws Error(invalid_argument) for bad options, Error(timeout) when fewer
// than MIN nodes come, Error(cancelled) when the job has finished or `pause` said stop.
NUBO_API ElasticRound join_elastic_round(const std::string& rendezvous, int node_rank,
                                         int after_round, const ElasticOptions& options);

// Tells nodes still waiting to join that the job has ended (with `status`), so that they stop.
NUBO_API void finish_elastic_job(const std::string& rendezvous, int status);

}  // namespace nubo
