// What an S3 ETag says about the bytes behind it. For an object put whole it is the MD5 of its
// content; for a multipart upload, the MD5 of its parts' MD5s (binary, concatenated) and "-N"
// for N parts. Under SSE-KMS or SSE-C it is neither, and some servers make their own: then it
// says nothing about the content. Both the download check (etag_check.hpp) and the upload's
// check that the server stored what was sent (client.cpp) read ETags through here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transfer/bytes.hpp"
#include "transfer/store/md5.hpp"

namespace nubo::s3 {

using store::Md5;
using store::md5_base64;
using store::md5_hex;
using store::md5_of;

// An ETag (quotes and case aside) that is an MD5: whole ("<32 hex>"), or of a multipart upload
// ("<32 hex>-N", N from 1 to 10,000). nullopt for anything else.
struct EtagMd5 {
  std::string md5;  // lower-case hex
  int parts = 0;    // 0: the object was put whole
};
std::optional<EtagMd5> parse_etag_md5(std::string_view etag);

// The ETag S3 gives a multipart upload of parts with these MD5s, "<hex>-N".
std::string multipart_etag(const std::vector<Md5>& part_md5s);
// The binary MD5 of a part from its ETag; nullopt when the ETag is no MD5.
std::optional<Md5> md5_of_etag(std::string_view etag);

// Whether the object is encrypted with a key the server holds (SSE-KMS) or the caller gave
// (SSE-C), from x-amz-server-side-encryption and the customer-key headers: its ETags are then
// no MD5 of the content.
bool etag_is_not_content_md5(std::string_view server_side_encryption, bool customer_key);

}  // namespace nubo::s3
