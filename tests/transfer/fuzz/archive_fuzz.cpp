// The archive reader under attack: arbitrary bytes as an archive. Opening, listing, reading every
// file through Reader and verifying must either work or throw nubo::Error; never crash, hang or
// allocate without bound. Built as a libFuzzer target by the `fuzz` preset, and replayed over a
// generated corpus as a regular test (archive_fuzz_replay.cpp). Its bytes rarely get past the
// checksums; archive_structure_fuzz.cpp writes archives whose checksums hold.
#include <cstddef>
#include <cstdint>

#include "fuzz_readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nubo_fuzz::MemFile archive(data, size);
  if (archive.fd >= 0) nubo_fuzz::read_everything(archive.path);
  return 0;
}
