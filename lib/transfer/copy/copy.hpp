// Files to and from the objects of a store (store.hpp), each file one object, resumable after any
// interruption:
//  - upload: objects of up to a part are one PUT; larger ones a multipart upload whose part
//    size adapts (8 to 64 MiB, more only beyond 10,000 parts). A local journal remembers the
//    upload id; run again, the same command asks the server which parts it holds (ListParts),
//    keeps those whose ETag matches the local part's MD5, and sends only the rest. The object
//    appears only at CompleteMultipartUpload, never half-written under its name. The file's
//    XXH3-128 travels as metadata (x-amz-meta-nubo-xxh3-128).
//  - download: parallel ranged GETs into a temporary file beside the destination, a journal of
//    the parts written, then the whole file checked against that XXH3-128 (or, for an object
//    another client uploaded, its ETag: etag_check.hpp) before it is renamed into place.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "nubo/copy.hpp"
#include "transfer/pipeline/target_dir.hpp"
#include "transfer/pipeline/walk.hpp"
#include "transfer/store/parts.hpp"
#include "transfer/store/store.hpp"

namespace nubo::store {

// The metadata under which an uploaded file's XXH3-128 (hex) travels with its object.
inline constexpr char kHashMetadata[] = "nubo-xxh3-128";
// The metadata that marks an object holding a symlink's target (Symlinks::store).
inline constexpr char kSymlinkMetadata[] = "nubo-symlink";

// What a copy's options ask of the stores it opens, checked once for cp, sync and their
// bindings alike: streams (1..64), part size (0, or 5 MiB..5 GiB), rate (finite, >= 0),
// server-side encryption (AES256 or aws:kms). `destination` is what is written (s3.profile, the
// encryption); `source` what is read between stores (s3.source_profile, else s3.profile; no
// encryption of its own). Error(invalid_argument) naming the option otherwise.
struct StorePlan {
  Options destination, source;
};
StorePlan plan_stores(const transfer::CopyOptions& options, Operation operation);

// One file each way (nubo/copy.hpp's copy() walks trees with these). The progress callback sees
// the file's bytes.
transfer::CopySummary upload_file(Store& store, const std::string& path, const ObjectUrl& url,
                                  const transfer::CopyOptions& options = {});
transfer::CopySummary download_file(Store& store, const ObjectUrl& url, const std::string& path,
                                    const transfer::CopyOptions& options = {});
// The files of the local tree `root` a copy takes (and, with Symlinks::store, its links), as
// walk_sources names them, with the options' filters and link rules; the links followed, stored
// and skipped added to `counted`.
std::vector<transfer::SourceEntry> copy_walk(const std::string& root,
                                             const transfer::CopyOptions& options,
                                             transfer::CopySummary& counted);
// A symlink stored as itself (Symlinks::store): an object whose body is its target, marked with
// kSymlinkMetadata; a download that stores links restores it as a link (its target checked as
// unpack checks an archive's), one that does not skips it, counted.
transfer::CopySummary upload_link(Store& store, const std::string& target, const ObjectUrl& url);
// A download to `rel` below `root` (a tree's download, a sync's), every folder on the way
// reached with O_NOFOLLOW from the one above, as unpack's: nothing lands through a symlink in
// the destination, planted or not. A key named as nubo's own partial files is refused.
transfer::CopySummary download_into(Store& store, const ObjectUrl& url, transfer::TargetDir& root,
                                    const std::string& rel,
                                    const transfer::CopyOptions& options = {});

}  // namespace nubo::store
