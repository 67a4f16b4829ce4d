// A shared file system mounted here (NFS, Lustre, EFS, a local disk) as an object store:
// file:///PATH, the path as written (absolute; no host but "localhost"; no percent-decoding).
//  - An object is the file at PATH; it appears only whole, written beside its name and renamed
//    into place (atomic on every POSIX file system), then its directory fsynced.
//  - Metadata (nubo's XXH3-128, an encrypted object's key block) lives beside it in
//    ".NAME.nubo-meta", which records the file's size and modification time: metadata that no
//    longer describes the file (it was replaced by another program) is not used.
//  - A multipart upload is a directory ".nubo-upload-ID" beside the object, each part a file
//    "NUMBER.MD5" (written under another name and renamed); completing it joins the parts
//    (copy_file_range: no copy through memory, a reflink where the file system can) and renames
//    the result into place. An interrupted upload resumes from the parts there, as from S3's.
//  - Listing walks the directory, sorted, leaving out the store's own files; a missing directory
//    is Error(not_found), as a missing bucket is.
//  - The ETag is the size and modification time: it changes with the file, and says nothing of
//    the content (downloads check nubo's XXH3-128 instead).
#pragma once

#include <memory>
#include <string_view>

#include "transfer/store/store.hpp"

namespace nubo::file_store {

store::ObjectUrl parse_file_url(std::string_view text);
std::unique_ptr<store::Store> open_store(const store::Options& options);

}  // namespace nubo::file_store
