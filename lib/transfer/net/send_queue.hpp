// The messages a send has ready for the wire, shared by its streams: the pipeline's consumer
// pushes in order, each stream pops the next one, so a faster stream simply takes more. Bounded,
// so compression never runs far ahead of the link. The first failure of any side wakes all.
// `on_backlog` (optional) hears the queue's fill (0..1) as each message joins it: full, the link
// is behind; empty, the link waits for messages.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

namespace nubo::transfer::net {

struct OutMsg {
  std::vector<std::byte> head;  // frame header (+ chunk meta)
  std::vector<std::byte> body;  // a chunk's payload
};

class SendQueue {
 public:
  explicit SendQueue(std::size_t capacity, std::function<void(double)> on_backlog = {})
      : capacity_(capacity), on_backlog_(std::move(on_backlog)) {}

  // Blocks while full; rethrows the failure that stopped the queue.
  void push(OutMsg m);
  // False when closed and drained, or failed.
  bool pop(OutMsg& m);
  void close();
  void fail(std::exception_ptr e);
  std::exception_ptr failure() const;

 private:
  std::size_t capacity_;
  std::function<void(double)> on_backlog_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<OutMsg> items_;
  bool closed_ = false;
  std::exception_ptr failure_;
};

}  // namespace nubo::transfer::net
