// The tcp:// rendezvous store: the job's rank-0 process hosts it on the port every process
// knows (MASTER_PORT, as torchrun's c10d TCPStore), the others connect to it, so a job across
// hosts needs no shared folder and no Redis. With a token (NUBO_TOKEN) the processes prove to
// each other that they know it, and every message is sealed with an HMAC: a process of another
// job, or anyone on the path, cannot read the store's answers as nubo's or alter them. Every
// message's size is checked against its limit before anything is read.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "parallel/rendezvous/store.hpp"

namespace nubo::parallel {

// `host`: this process is rank 0 and serves the store (on every interface, at url.port),
// shared by all of its teams. Connecting retries until `timeout` (rank 0 may start later);
// Error(unavailable) naming the store when nobody answers, Error(invalid_argument) when the
// tokens differ.
std::unique_ptr<Store> make_tcp_store(const RendezvousUrl& url, bool host, const std::string& token,
                                      std::chrono::milliseconds timeout);

}  // namespace nubo::parallel
