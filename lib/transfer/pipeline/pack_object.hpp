// pack -o SCHEME://BUCKET/KEY (any store): the archive goes up as a multipart upload while it is
// made, each part straight from memory (no staging file, no local disk the size of the archive). A
// part ends at the first record boundary past the part size (8-64 MiB, within S3's 10,000 parts),
// so that where each part ends the pack can stand still: the journal (in the cache) records, for
// each part, the index records it added and the pack's state at its end, and the ETag the server
// gave it. A rerun asks the server which parts it holds (ListParts), keeps the longest run of
// parts from the first whose ETags match and whose entries are still the sources as they are
// now, and packs on from the end of the last one kept. The object appears only at
// CompleteMultipartUpload.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transfer/pipeline/pack_target.hpp"
#include "transfer/store/store.hpp"

namespace nubo::transfer {

// Error(invalid_argument) when `url` names no object (no key, or a prefix).
std::unique_ptr<PackTarget> object_target(const std::vector<std::string>& sources,
                                          const store::ObjectUrl& url, const PackOptions& options);

}  // namespace nubo::transfer
