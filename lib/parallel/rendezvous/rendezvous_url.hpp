// Where the processes of a job meet: NUBO_RENDEZVOUS, nubo-run's --rendezvous.
//
//   file:///shared/dir          a folder every process can reach (one host, or a shared file
//                               system); keys are files in it
//   tcp://host:port             a store that the job's rank-0 process hosts on that port, as
//                               torchrun's c10d TCPStore does (MASTER_ADDR, MASTER_PORT)
//   redis://host[:port][/job]   a Redis server; keys are prefixed with "nubo/<job>/"
//
// Parsing is strict: a bad location is an invalid_argument naming where it came from (the
// variable or flag), what is wrong and an example of what works.
#pragma once

#include <string>
#include <string_view>

namespace nubo::parallel {

struct RendezvousUrl {
  enum class Kind { file, tcp, redis } kind = Kind::file;
  std::string path;  // file: the folder, absolute
  std::string host;  // tcp, redis: host name or address (IPv6 without brackets)
  int port = 6379;   // tcp (given), redis (default 6379)
  std::string job;   // redis: key namespace; may be empty
  std::string text;  // the location as given, for messages
};

// `what` names the source in errors, e.g. "NUBO_RENDEZVOUS" or "--rendezvous".
RendezvousUrl parse_rendezvous(std::string_view url, std::string_view what);

}  // namespace nubo::parallel
