// An S3 object as a ByteSource: read by ranged GETs, through a small cache of 1 MiB blocks so
// that the many small reads of an archive's records (headers, entries, ends) cost one request
// per block, while chunk-sized reads go straight to the server. Ranges announced by will_need
// (unpack and verify read ahead: archive_reader.hpp's ReadAhead) are fetched at once, each by a
// thread of its own, and served from memory when read.
#pragma once

#include <memory>
#include <string>

#include "transfer/byte_source.hpp"
#include "transfer/s3/client.hpp"

namespace nubo::s3 {

// "s3://BUCKET/KEY"; Error(not_found) when the object does not exist.
std::unique_ptr<transfer::ByteSource> open_object_source(const std::string& url);

}  // namespace nubo::s3
