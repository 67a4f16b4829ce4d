// The Remote between processes through Gloo (Debian libgloo-dev): its TCP transport, set up
// through nubo's rendezvous store, and its classic ring all-reduce, one-to-all broadcast, ring
// all-gather and all-to-all barrier (built once per set of buffers and kept for reuse).
//
// Before every collective the processes swap a 32-byte header (which collective, its number,
// size, type, op, root) with every other process, and compare them. Gloo itself cannot survive
// a mismatch: a receive smaller than the message aborts the whole process from Gloo's network
// thread. The headers travel all at once, so this costs one small message's latency.
//
// When a collective fails (a peer died, hung, or gave up), the link closes its connections, so
// every other process's pending collective fails at once too, and each survivor leaves a note
// in the store ("fail/<rank>"). It then waits briefly for the others' notes: a process that
// wrote none is named as the one that died or hangs; one that wrote "origin" failed first and
// its reason is passed on.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "parallel/links/remote.hpp"
#include "parallel/rendezvous/store.hpp"

namespace nubo::parallel {

struct GlooLinkOptions {
  int rank = 0;         // this process
  int size = 1;         // processes
  int local_size = 1;   // workers per process (ranks p * local_size + i), for messages
  std::string address;  // where the others reach this process (an address or host name)
  // Each process for messages ("host 1 (rank 4)"); empty: named by process_name().
  std::vector<std::string> names;
  std::chrono::milliseconds timeout{60000};
};

// Connects to every other process (a full mesh of TCP connections). `store` is the team's view
// of the rendezvous store. Throws unavailable when the mesh cannot be formed within the timeout.
std::shared_ptr<Remote> connect_gloo(std::shared_ptr<Store> store, const GlooLinkOptions& options);

// True when this build has Gloo.
bool have_gloo() noexcept;

}  // namespace nubo::parallel
