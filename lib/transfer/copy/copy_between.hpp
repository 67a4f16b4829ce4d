// One object from one store to another (buckets, regions, accounts, or two kinds of store), never
// staged on this machine's disk:
//  - within one store (the destination reaches the source with its own credentials:
//    Store::copies_from), the store copies: CopyObject, or beyond `whole_copy_limit` (S3's
//    5 GiB) a multipart upload of UploadPartCopy ranges. No byte of the object goes through
//    this machine.
//  - otherwise it is streamed: ranged GETs of the source feed the parts of a multipart upload
//    (a single PUT for an object of one part), `streams` parts at once, so memory stays at about
//    `streams` parts. A journal keeps the upload id and the MD5 of each part sent: run the same
//    copy again after any interruption, SIGKILL included, and it asks the destination for the
//    parts it holds and sends only the rest.
//  - verified end to end: the bytes read are checked against what the source says of its
//    content (nubo's XXH3-128 in its metadata, or its ETag: the MD5 of an object put whole, or
//    the MD5 of the parts' MD5s of a multipart one, whose part sizes the copy then takes), the
//    destination checks each part's Content-MD5, and its final ETag is checked against the
//    parts sent. Nothing is completed at the destination when the source's bytes do not match.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "nubo/copy.hpp"
#include "transfer/store/store.hpp"

namespace nubo::store {

constexpr std::uint64_t kMaxCopyObject = 5ull << 30;  // S3's limit for one CopyObject

// The summary's bytes_sent counts what went through this machine, bytes_server_side what the
// store copied itself. Error(invalid_argument) when `from` and `to` are the same object of the
// same store; Error(not_found) for a missing source; Error(corrupt) when the bytes read are not
// those the source describes.
transfer::CopySummary copy_between(Store& source, const ObjectUrl& from, Store& destination,
                                   const ObjectUrl& to, const transfer::CopyOptions& options,
                                   std::uint64_t whole_copy_limit = kMaxCopyObject);

// Several objects, each as copy_between copies it, up to options.streams objects at once (each
// then with its share of the streams: one object alone gets them all), as rclone's --transfers.
// Progress is reported from the calling thread over all of them. The first failure stops the
// rest and is rethrown; what was copied stays, and a rerun resumes the rest.
transfer::CopySummary copy_many(Store& source, Store& destination,
                                const std::vector<std::pair<ObjectUrl, ObjectUrl>>& pairs,
                                const transfer::CopyOptions& options);

}  // namespace nubo::store
