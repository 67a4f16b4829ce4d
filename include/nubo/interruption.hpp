// Interruption notices of spot capacity (docs/train.md, "Spot interruptions"): a watcher polls
// the instance metadata service of the cloud it runs on, as each provider documents it, and
// calls back once when the machine is about to be taken away, before the SIGTERM:
//  - AWS: IMDSv2 (a session token from PUT /latest/api/token), then
//    GET /latest/meta-data/spot/instance-action: 404 until a notice, then {"action", "time"};
//  - GCP: GET /computeMetadata/v1/instance/preempted (Metadata-Flavor: Google): TRUE or FALSE;
//  - Azure: GET /metadata/scheduledevents?api-version=2020-07-01 (Metadata: true): an event of
//    type Preempt (or Terminate) among "Events".
// The service is http://169.254.169.254 unless NUBO_METADATA_URL names another (a test server).
// The watcher is off when none of them answers within 100 ms at start: off the cloud it costs
// nothing.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "nubo/export.hpp"

namespace nubo {

struct InterruptionNotice {
  std::string cloud;         // "aws", "gcp" or "azure"
  std::string action;        // "terminate", "stop", "preempt", ...
  std::string detail;        // the provider's own words (its JSON or text), for the log
  double seconds_left = -1;  // until the machine goes, when the provider says; -1: unknown
};

class NUBO_API InterruptionWatcher {
 public:
  using Callback = std::function<void(const InterruptionNotice&)>;
  // Probes the metadata service (at most 100 ms), then polls it every `poll_seconds` on a
  // thread of its own; `on_notice` is called once, from that thread.
  explicit InterruptionWatcher(Callback on_notice, double poll_seconds = 2);
  ~InterruptionWatcher();
  InterruptionWatcher(const InterruptionWatcher&) = delete;
  InterruptionWatcher& operator=(const InterruptionWatcher&) = delete;

  // The cloud found ("aws", "gcp", "azure"), or "" when the watcher is off.
  std::string cloud() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nubo
