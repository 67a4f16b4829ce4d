// nubo_transfer_archive: an open archive through the C ABI, for listing and random access.
#include <memory>
#include <string>
#include <vector>

#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/transfer.hpp"
#include "records.hpp"
#include "sized_struct.hpp"

struct nubo_transfer_archive {
  nubo_transfer_archive(const std::string& path, const std::string& key_file)
      : reader(path, key_file),
        entries(reader.entries(), nubo::capi::to_nubo_transfer_archive_entry_info) {}
  nubo::transfer::Reader reader;
  nubo::capi::Records<nubo_transfer_archive_entry_info> entries;  // its strings the reader's
};

extern "C" {

NUBO_C_API nubo_status nubo_transfer_archive_open(const char* path, nubo_transfer_archive** out) {
  return nubo_transfer_archive_open_with_key(path, nullptr, out);
}

NUBO_C_API nubo_status nubo_transfer_archive_open_with_key(const char* path, const char* key_file,
                                                           nubo_transfer_archive** out) {
  return nubo::capi::guard("nubo_transfer_archive_open", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    nubo::capi::require(path, "path");
    *out = std::make_unique<nubo_transfer_archive>(path, key_file ? key_file : "").release();
  });
}

NUBO_C_API void nubo_transfer_archive_free(nubo_transfer_archive* archive) {
  delete archive;
}

NUBO_C_API size_t nubo_transfer_archive_entry_count(const nubo_transfer_archive* archive) {
  return archive == nullptr ? 0 : archive->entries.size();
}

NUBO_C_API nubo_status nubo_transfer_archive_entry(const nubo_transfer_archive* archive,
                                                   size_t index,
                                                   nubo_transfer_archive_entry_info* out) {
  return nubo::capi::guard("nubo_transfer_archive_entry", [&] {
    nubo::capi::require(archive, "archive")
        ->entries.read(index, out, "the archive", "entries", "nubo_transfer_archive_entry_info");
  });
}

NUBO_C_API nubo_status nubo_transfer_archive_find(const nubo_transfer_archive* archive,
                                                  const char* path, size_t* index) {
  return nubo::capi::guard("nubo_transfer_archive_find", [&] {
    nubo::capi::require(archive, "archive");
    nubo::capi::require(path, "path");
    nubo::capi::require(index, "index");
    const auto* e = archive->reader.find(path);
    if (e == nullptr) {
      throw nubo::Error(nubo::Errc::not_found,
                        "no entry '" + std::string(path) + "' in the archive");
    }
    *index = static_cast<size_t>(e - archive->reader.entries().data());
  });
}

NUBO_C_API nubo_status nubo_transfer_archive_read(const nubo_transfer_archive* archive,
                                                  const char* path, uint64_t offset, void* buf,
                                                  size_t capacity, size_t* read) {
  return nubo::capi::guard("nubo_transfer_archive_read", [&] {
    nubo::capi::require(read, "read");
    *read = 0;
    nubo::capi::require(archive, "archive");
    nubo::capi::require(path, "path");
    if (capacity > 0) nubo::capi::require(buf, "buf");
    *read = archive->reader.read(path, offset, {static_cast<std::byte*>(buf), capacity});
  });
}

}  // extern "C"
