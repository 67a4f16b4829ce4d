// Whether a downloaded object's bytes are the ones the server stored, for objects nubo did not
// upload (no XXH3-128 in their metadata): S3's ETag is the MD5 of the content for an object put
// whole, and for a multipart upload the MD5 of its parts' MD5s followed by "-N" (N parts). The
// part boundaries come from HEAD ?partNumber=K. An ETag that is not an MD5 (SSE-KMS, SSE-C, a
// server that makes its own) cannot be checked, and the verdict says why.
#pragma once

#include <cstdint>
#include <string>

#include "transfer/file_io.hpp"
#include "transfer/store/s3/client.hpp"

namespace nubo::s3 {

struct EtagVerdict {
  enum class Result { matched, mismatched, not_checkable } result = Result::not_checkable;
  std::string detail;  // mismatched: what was computed; not_checkable: why
};

// Checks the first `info.size` bytes of `file` against `info`'s ETag (asking the server for the
// part sizes of a multipart object).
EtagVerdict check_etag(store::Store& store, const ObjectUrl& url, const ObjectInfo& info,
                       const transfer::Fd& file);

}  // namespace nubo::s3
