// Where an interrupted pack resumes. The partial archive ("<archive>.part") is read back record
// by record: up to the journal's last checkpoint the records were fsynced before the checkpoint
// was, so their headers are enough; past it, every chunk is decoded and checked against its
// XXH3-64 before it is kept. Each entry record is compared with the same source as it is now
// (kind, size, mtime, mode, link target); the first that differs, and everything after it, is
// packed again. The first damaged or torn record ends what is kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transfer/file_io.hpp"
#include "transfer/format/format.hpp"
#include "transfer/hash.hpp"
#include "transfer/journal.hpp"
#include "transfer/keys/archive_keys.hpp"
#include "transfer/pipeline/walk.hpp"

namespace nubo::transfer {

// Journal record types of pack.
constexpr std::uint16_t kPackCheckpoint = 1;

struct PackCheckpoint {
  std::uint64_t archive_offset = 0;   // records before it are durable
  std::uint64_t entries = 0;          // entry records before it
  std::uint64_t open_chunks = 0;      // chunks of the last entry, when it is an unfinished file
  bool open = false;                  // the last entry is a file without its end record yet
  std::vector<std::byte> hash_state;  // FileHasher::save() of that file
};
std::vector<std::byte> encode_checkpoint(const PackCheckpoint& c);
std::optional<PackCheckpoint> decode_checkpoint(Bytes in);  // none when malformed

// What differs between an entry as packed and as it is now ("its size changed"); empty when
// nothing does. An entry that differs is packed again, and everything after it.
std::string entry_difference(const format::EntryMeta& packed, const format::EntryMeta& now);

struct PackResume {
  bool fresh = true;           // nothing usable: start a new archive
  std::uint64_t offset = 0;    // end of the verified records
  format::Index index;         // the records before `offset`
  std::size_t next_entry = 0;  // the source entry to continue with
  bool open = false;           // next_entry's entry record and some chunks are written
  std::uint64_t next_chunk = 0;
  FileHasher hasher;  // next_entry's content hash so far, when open
  std::uint64_t skipped_bytes = 0;
  std::optional<ArchiveCipher> cipher;  // the partial archive's, when it is encrypted
};

// `keys`: what the pack encrypts with (nothing: not encrypted). A partial archive encrypted
// otherwise (or not at all, or with another key) is started over.
PackResume scan_partial(const Fd& part, const Journal& journal,
                        const std::vector<SourceEntry>& sources, std::uint32_t chunk_size,
                        const KeySource& keys);

}  // namespace nubo::transfer
