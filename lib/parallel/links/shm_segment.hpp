// A POSIX shared-memory segment (/dev/shm) that the processes of a job on one host map.
//
// Its name says who made it: "nubo-<creator pid>-<creator start time>-<random>". A segment is
// unlinked as soon as every process has mapped it, so that nothing is left behind whatever
// happens next (the mappings keep the memory until the last process exits, even by SIGKILL).
// Only a creator killed before everyone attached leaves one behind: the next creator on the
// host sees that its creator is gone and removes it. A segment is only ever opened by the name
// its creator published for this job, and checked (size, creator) before use: a stale one is
// never joined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nubo::parallel {

class ShmSegment {
 public:
  // A new segment of `bytes`, zero-filled, after removing stale ones. Error(unavailable) naming
  // the reason when /dev/shm refuses (full, missing, no permission).
  static ShmSegment create(std::size_t bytes);
  // The segment `name` made by process `creator_pid`; Error(unavailable) when it does not
  // exist, was made by another process, or does not hold `bytes`.
  static ShmSegment open(const std::string& name, long creator_pid, std::size_t bytes);

  ShmSegment() = default;  // none: maps nothing
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();  // unmaps; the name is removed by unlink()

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // Removes the name from /dev/shm (once: later calls do nothing). The mapping stays.
  void unlink() noexcept;

 private:
  ShmSegment(std::string name, void* data, std::size_t size)
      : name_(std::move(name)), data_(data), size_(size) {}
  std::string name_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  bool unlinked_ = false;
};

// Removes the segments in /dev/shm that nubo named and whose creator has exited; returns how
// many. Segments of live processes, and every other file, are left alone.
int remove_stale_segments();

// The creator pid and start time a segment name carries; false for a name that is not nubo's.
bool parse_segment_name(const std::string& name, long& pid, std::uint64_t& started);

}  // namespace nubo::parallel
