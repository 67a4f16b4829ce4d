// Files to and from S3-compatible object storage (docs/s3.md): `copy` moves a file or a tree
// between this machine and s3://BUCKET/KEY, each file one object, resumable after any
// interruption (a multipart upload continues with the parts the server holds; a download with
// the parts already written) and verified (each part by the server against its Content-MD5,
// each file end to end by its XXH3-128, stored as the object's metadata). Where to reach S3 and
// with which keys is read as the AWS CLI reads it (AWS_* variables, ~/.aws profiles).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nubo/export.hpp"
#include "nubo/transfer.hpp"

namespace nubo::s3 {

struct CopyOptions {
  int streams = 4;              // parts in flight, 1..64
  std::uint64_t part_size = 0;  // 0: adapted to each object (8 to 64 MiB; 5 MiB at least)
  bool keep_partial = false;    // a cancelled upload stays resumable instead of aborted
  bool sync = true;             // fdatasync downloads before their rename
  std::string profile;          // the AWS profile; empty: AWS_PROFILE or "default"
  // Server-side encryption passed through: "AES256", or "aws:kms" with kms_key_id.
  std::string server_side_encryption, kms_key_id;
  std::vector<std::string> exclude, include;  // uploads of a tree: as pack's filters
  std::string journal_dir;                    // where upload journals live; empty: ~/.cache/nubo/s3
  transfer::ProgressFn progress;  // called from one thread; false cancels (Error(cancelled))
  // Bytes per second over every part in flight together (as rclone's --bwlimit, on average
  // over the parts); 0: unlimited.
  double rate = 0;
  // Client-side encryption (docs/s3.md, "Encryption"): uploads are encrypted with the key in
  // this file (transfer::keygen makes one); downloads of encrypted objects need it.
  std::string key_file;
};

struct CopySummary {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;          // the files' sizes
  std::uint64_t bytes_sent = 0;     // moved this time
  std::uint64_t bytes_resumed = 0;  // verified by an interrupted attempt, not moved again
  std::uint64_t parts = 0;
  double seconds = 0;
};

// `from` and `to` are a local path and an s3:// URL, either way round:
//  - a file to s3://B/KEY, or to s3://B/PREFIX/ (the file's name appended);
//  - a directory to s3://B/PREFIX/: each file under PREFIX/DIRNAME/..., symlinks not followed;
//  - s3://B/KEY to a file, or into an existing directory;
//  - s3://B/PREFIX/ to a directory: every object under the prefix, its key's rest as the path
//    (keys that would leave the directory are refused).
// Errors: Error(invalid_argument) for bad URLs, options, or credentials missing or refused (with
// advice),
// Error(not_found) for a missing bucket or object, Error(unavailable) when the server cannot be
// reached after the retries (run it again: it resumes), Error(corrupt) when content does not
// verify, Error(cancelled).
NUBO_API CopySummary copy(const std::string& from, const std::string& to,
                          const CopyOptions& options = {});

}  // namespace nubo::s3
