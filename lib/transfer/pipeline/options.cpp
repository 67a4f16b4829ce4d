#include "transfer/pipeline/options.hpp"

#include <algorithm>
#include <string>
#include <thread>

#include "nubo/error.hpp"
#include "nubo/units.hpp"
#include "transfer/codec/codec_table.hpp"
#include "transfer/format/format.hpp"

namespace nubo::transfer {

namespace {
[[noreturn]] void bad(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}
}  // namespace

Resources plan_resources(int threads, std::uint64_t memory_limit, std::uint64_t chunk_size) {
  if (threads < 0 || threads > 1024) {
    bad("threads " + std::to_string(threads) + " is out of range: use 0 (every core) to 1024");
  }
  Resources r;
  r.workers = threads > 0 ? static_cast<std::size_t>(threads)
                          : std::max(1u, std::thread::hardware_concurrency());
  auto per_slot = 2 * chunk_size;
  if (memory_limit / per_slot < 2) {
    bad("memory limit " + format_bytes(static_cast<double>(memory_limit)) +
        " is less than two chunks of " + format_bytes(static_cast<double>(chunk_size)) +
        " in flight (each needs twice its size): raise the "
        "memory limit to at least " +
        format_bytes(static_cast<double>(2 * per_slot)) + " or use a smaller chunk size");
  }
  // Enough slots to keep every worker busy while the reader and the writer hold one each, and
  // never more than the memory allows.
  r.slots =
      static_cast<std::size_t>(std::min<std::uint64_t>(memory_limit / per_slot, 2 * r.workers + 4));
  r.workers = std::min(r.workers, r.slots);
  return r;
}

void check_chunk_size(std::uint64_t chunk_size) {
  if (chunk_size < format::kMinChunkSize || chunk_size > format::kMaxChunkSize) {
    bad("chunk size " + std::to_string(chunk_size) + " is out of range: use 4 KiB to 64 MiB");
  }
}

CodecSetting fixed_setting(Codec codec, int level) {
  const CodecRow* row = find_codec(codec);
  if (codec == Codec::automatic) bad("codec auto has no fixed setting");
  if (!row || !row->selectable || !row->stored) {
    bad("codec " + std::string(codec_name(codec)) + " is not one to choose: use " +
        selectable_codec_names());
  }
  return {*row->stored, checked_level(*row, level)};
}

int auto_max_level(int level) {
  return checked_level(*find_codec(Codec::automatic), level);
}

}  // namespace nubo::transfer
