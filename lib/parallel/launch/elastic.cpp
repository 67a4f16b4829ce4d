// The rounds of an elastic job, in the rendezvous store under "elastic/":
//   r<R>/node/<rank>  set by each node that comes to round R
//   r<R>/members      "0,1,3": who takes part, set once (set_if_absent): the first node to
//                     decide wins, and every other reads its decision. Only the members of
//                     round R - 1 decide round R: a node that comes while the job runs must
//                     not form a round of its own beside it, so it waits for them.
//   latest            the newest round formed, so that a node that starts late joins the next
//   finished          the job's exit status, once it has ended
#include <algorithm>
#include <thread>

#include "common/log.hpp"
#include "common/text.hpp"
#include "nubo/elastic.hpp"
#include "nubo/error.hpp"
#include "parallel/rendezvous/store.hpp"

namespace nubo {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxNodes = 4096;
constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr auto kStoreTimeout = std::chrono::seconds(10);

std::shared_ptr<parallel::Store> open_elastic_store(const std::string& rendezvous) {
  const auto url = parallel::parse_rendezvous(rendezvous, "the elastic rendezvous");
  if (url.kind == parallel::RendezvousUrl::Kind::tcp)
    throw Error(Errc::invalid_argument,
                "an elastic job needs a rendezvous that outlives every node: a folder they "
                "share (file:///shared/dir) or Redis (redis://host:6379/job); the tcp:// store "
                "lives in rank 0's process, which a restart stops");
  return parallel::prefixed(parallel::open_store(url, false, kStoreTimeout), "elastic/");
}

std::string members_text(const std::vector<int>& members) {
  std::string out;
  for (const int m : members) {
    if (!out.empty()) out += ',';
    out += std::to_string(m);
  }
  return out;
}

std::vector<int> parse_members(const std::string& text, int max_nodes, const std::string& where) {
  std::vector<int> members;
  for (const auto part : text::split(text, ','))
    members.push_back(
        static_cast<int>(text::parse_int(part, "the members of " + where, 0, max_nodes - 1)));
  if (members.empty() || !std::is_sorted(members.begin(), members.end()) ||
      std::adjacent_find(members.begin(), members.end()) != members.end())
    throw Error(Errc::corrupt, where + " holds '" + text.substr(0, 64) + "', not a list of nodes");
  return members;
}

// "r<round>/<leaf>" (built with += : GCC 12 warns falsely about "r" + std::string).
std::string round_key(int round, const std::string& leaf) {
  std::string key = "r";
  key += std::to_string(round);
  key += '/';
  key += leaf;
  return key;
}

std::string seconds_text(std::chrono::milliseconds d) {
  return std::to_string(static_cast<double>(d.count()) / 1000.0).substr(0, 5) + " s";
}

}  // namespace

ElasticRound join_elastic_round(const std::string& rendezvous, int node_rank, int after_round,
                                const ElasticOptions& o) {
  if (o.min_nodes < 1 || o.max_nodes < o.min_nodes || o.max_nodes > kMaxNodes)
    throw Error(Errc::invalid_argument,
                "elastic nodes " + std::to_string(o.min_nodes) + ":" + std::to_string(o.max_nodes) +
                    ": give MIN:MAX with 1 <= MIN <= MAX <= " + std::to_string(kMaxNodes));
  if (node_rank < 0 || node_rank >= o.max_nodes)
    throw Error(Errc::invalid_argument, "node rank " + std::to_string(node_rank) +
                                            " is not in 0 .. " + std::to_string(o.max_nodes - 1));
  if (o.last_call.count() < 0 || o.join_timeout.count() <= 0)
    throw Error(Errc::invalid_argument, "elastic timeouts must be positive");
  auto store = open_elastic_store(rendezvous);
  int round = std::max(after_round + 1, 0);
  if (const auto latest = store->try_get("latest"))
    round = std::max(round, static_cast<int>(text::parse_int(
                                *latest, "elastic/latest in " + store->describe(), 0, 1 << 30)) +
                                1);
  auto deadline = Clock::now() + o.join_timeout;
  for (;;) {
    const std::string prefix = round_key(round, "");
    store->set(prefix + "node/" + std::to_string(node_rank), "here");
    std::optional<Clock::time_point> enough_since;  // when MIN nodes had come
    std::vector<int> previous;                      // the members of the round before
    if (round > 0)
      if (const auto p = store->try_get(round_key(round - 1, "members")))
        previous =
            parse_members(*p, o.max_nodes, "the members of round " + std::to_string(round - 1));
    const bool may_decide = previous.empty() || std::find(previous.begin(), previous.end(),
                                                          node_rank) != previous.end();
    std::vector<int> members;
    for (;;) {
      if (const auto status = store->try_get("finished"))
        throw Error(Errc::cancelled, "the job at " + store->describe() + " has finished (status " +
                                         status->substr(0, 8) +
                                         "): give another job id to run it again");
      if (const auto decided = store->try_get(prefix + "members")) {
        members = parse_members(*decided, o.max_nodes, prefix + "members");
        break;
      }
      std::vector<int> present;
      for (int n = 0; n < o.max_nodes; ++n)
        if (store->try_get(prefix + "node/" + std::to_string(n))) present.push_back(n);
      const auto now = Clock::now();
      if (static_cast<int>(present.size()) >= o.min_nodes && !enough_since) enough_since = now;
      if (may_decide && (static_cast<int>(present.size()) == o.max_nodes ||
                         (enough_since && now - *enough_since >= o.last_call))) {
        members = parse_members(store->set_if_absent(prefix + "members", members_text(present)),
                                o.max_nodes, prefix + "members");
        break;
      }
      if (enough_since && now >= deadline)
        throw Error(Errc::timeout, "round " + std::to_string(round) + " at " + store->describe() +
                                       " did not form within " + seconds_text(o.join_timeout) +
                                       ": it is formed by the nodes of the round before (" +
                                       members_text(previous) +
                                       "), and none came back; give another job id to start over");
      if (now >= deadline)
        throw Error(Errc::timeout,
                    std::to_string(present.size()) + " of the " + std::to_string(o.min_nodes) +
                        " nodes the job needs at least came to round " + std::to_string(round) +
                        " at " + store->describe() + " within " + seconds_text(o.join_timeout));
      if (!o.pause) {
        std::this_thread::sleep_for(kPoll);
      } else if (!o.pause(kPoll)) {
        throw Error(Errc::cancelled, "stopped while waiting for round " + std::to_string(round));
      }
    }
    store->set("latest", std::to_string(round));
    const auto me = std::find(members.begin(), members.end(), node_rank);
    if (me != members.end()) return {round, members, static_cast<int>(me - members.begin())};
    log::warn("node " + std::to_string(node_rank) + " came after round " + std::to_string(round) +
              " formed without it (nodes " + members_text(members) +
              "): waiting for the next round, which forms when the job next restarts");
    ++round;
    deadline = Clock::time_point::max();  // the job runs: wait for it to re-form or end
  }
}

void finish_elastic_job(const std::string& rendezvous, int status) {
  open_elastic_store(rendezvous)->set("finished", std::to_string(status));
}

}  // namespace nubo
