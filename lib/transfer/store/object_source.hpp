// An object of any store (store.hpp) as a ByteSource: read by ranged GETs, through a small cache of
// 1 MiB blocks so that the many small reads of an archive's records (headers, entries, ends) cost
// one request per block, while chunk-sized reads go straight to the server. Ranges announced by
// will_need (unpack and verify read ahead: archive_reader.hpp's ReadAhead) are fetched at once,
// several at a time by a few threads that keep their connections, and served from memory when
// read.
#pragma once

#include <memory>
#include <string>

#include "transfer/byte_source.hpp"
#include "transfer/store/store.hpp"

namespace nubo::store {

// A store URL (store::parse_url); Error(not_found) when the object does not exist.
std::unique_ptr<transfer::ByteSource> open_object_source(const std::string& url);

}  // namespace nubo::store

namespace nubo::transfer {

// The source `path` names, chosen by its scheme: an object of a store ("s3://BUCKET/KEY",
// "gs://BUCKET/KEY", "file:///PATH"), else a local file; so list, cat, verify and unpack take a
// store URL wherever they take a path. Errors as opening it does.
std::unique_ptr<ByteSource> open_source(const std::string& path);

}  // namespace nubo::transfer
