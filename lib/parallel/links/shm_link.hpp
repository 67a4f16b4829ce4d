// The Remote between the processes of a job that share a host: one shared-memory segment
// (shm_segment.hpp) that every process maps, and barriers on counters in it. It is what the
// in-process LocalGroup is between threads, with a copy in and out of the segment (a process
// cannot read another's memory):
//  - reduce: the buffer goes through in chunks small enough to stay in the caches. Each
//    process copies its chunk into its slot; after a barrier each reduces its slice of the
//    chunk over all slots, in process order (reduce_ranks: bit-identical everywhere), into the
//    result area; after the next barrier each copies the result out. Two sets of slots
//    alternate, so one barrier per chunk suffices: while the result of chunk c is copied out,
//    chunk c + 1 is reduced and chunk c + 2 copied in.
//  - broadcast: the root copies each chunk into the result area, the others copy it out.
//  - gather: each copies its chunk into its slot, then every slot out.
//  - exchange: each copies the same part of every block into its slot, then takes its own
//    block's part from every slot.
//  - barrier: one barrier.
// Each collective's first barrier also compares the processes' calls (as GlooLink's headers
// do), so a mismatch fails every process the same way, before any result is written.
//
// Barriers spin briefly (the peers usually arrive within microseconds), then sleep on a futex
// in the segment. While waiting, a process checks that the processes it waits for still run
// (pid and start time): one that died (SIGKILL included) is named within about 10 ms, and
// every other process is woken with the reason. abort() wakes them the same way.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "parallel/links/remote.hpp"
#include "parallel/rendezvous/store.hpp"

namespace nubo::parallel {

struct ShmLinkOptions {
  int member = 0;                  // this process, 0 .. members - 1, in job rank order
  int members = 1;                 // the processes sharing the segment
  std::vector<long> pids;          // each member's pid (from the meeting); member 0 creates
  std::vector<std::string> names;  // each member for messages: "rank 3", "process 1 (ranks 2 to 3)"
  std::string key;                 // where member 0 publishes the segment's name in the store
  std::chrono::milliseconds timeout{60000};
  std::size_t chunk_bytes = 0;  // a slot's size (a multiple of 64); 0: shm_chunk_bytes(members)
};

// The slot size for `members` processes: 512 KiB (measured best from 128 KiB to 1 MiB on 2
// processes, benchmarks/results/allreduce.md), smaller where the two sets of slots would pass
// 16 MiB, so that they stay in a server's last-level cache.
std::size_t shm_chunk_bytes(int members);

// Member 0 creates the segment and publishes its name under options.key; the others open it.
// Returns once every member has mapped it (the name is then removed from /dev/shm).
// Error(unavailable) when that does not happen within the timeout, naming who is missing, or
// when /dev/shm refuses.
std::shared_ptr<Remote> connect_shm(std::shared_ptr<Store> store, ShmLinkOptions options);

}  // namespace nubo::parallel
