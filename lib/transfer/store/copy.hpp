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
#include "transfer/store/store.hpp"

namespace nubo::store {

// The metadata under which an uploaded file's XXH3-128 (hex) travels with its object.
inline constexpr char kHashMetadata[] = "nubo-xxh3-128";

// Where upload journals live: `override`, else $XDG_CACHE_HOME/nubo/s3 or
// ~/.cache/nubo/s3; created when missing.
std::string cache_dir(const std::string& override);

// The part size for an object of `size` bytes (see above).
std::uint64_t part_size_for(std::uint64_t size);

// One file each way (nubo/copy.hpp's copy() walks trees with these). The progress callback sees
// the file's bytes.
transfer::CopySummary upload_file(Store& store, const std::string& path, const ObjectUrl& url,
                                  const transfer::CopyOptions& options = {});
transfer::CopySummary download_file(Store& store, const ObjectUrl& url, const std::string& path,
                                    const transfer::CopyOptions& options = {});

}  // namespace nubo::store
