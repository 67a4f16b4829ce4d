// Files and trees to and from object storage (docs/s3.md): `copy` moves a file or a tree
// between this machine and a store, each file one object, resumable after any interruption (a
// multipart upload continues with the parts the store holds; a download with the parts already
// written) and verified (each part by the store against its Content-MD5, each file end to end by
// its XXH3-128, kept as the object's metadata). The stores, by URL scheme:
//  - s3://BUCKET/KEY: S3 and S3-compatible servers, configured as the AWS CLI is (AWS_*
//    variables, ~/.aws profiles);
//  - gs://BUCKET/KEY: Google Cloud Storage through its XML API with HMAC keys (GS_ACCESS_KEY_ID
//    and GS_SECRET_ACCESS_KEY, or the boto file's [Credentials]);
//  - file:///PATH: a shared file system mounted here (NFS, Lustre, EFS), written as a store is:
//    an object appears only whole (an atomic rename), and an upload resumes from its parts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/export.hpp"
#include "nubo/transfer.hpp"

namespace nubo::transfer {

// What only an S3 store takes.
struct S3Options {
  std::string profile;  // the AWS profile; empty: AWS_PROFILE or "default"
  // Server-side encryption passed through: "AES256", or "aws:kms" with kms_key_id.
  std::string server_side_encryption, kms_key_id;
  // Copies between two stores: the source's profile (its keys, region, endpoint); empty: the
  // same as `profile`, which is then the destination's.
  std::string source_profile;
};

// What a copy or a sync does with a symlink in a local tree it uploads, as `aws s3 cp` and rclone
// do (the tree's root itself is always followed).
enum class Symlinks {
  // Copy what the link leads to, under the link's name. A link leaving the tree is followed
  // only with follow_outside; a dangling link or one back to a folder being copied (a loop) is
  // skipped with a warning. The default, as aws s3 cp.
  follow = 0,
  // Store the link itself: an object holding its target (metadata nubo-symlink), restored as a
  // link by a download or sync that also stores links (rclone's --links).
  store = 1,
  // Leave links out (counted in the summary).
  skip = 2,
};

struct CopyOptions {
  int streams = 4;              // parts in flight, 1..64
  std::uint64_t part_size = 0;  // 0: adapted to each object (8 to 64 MiB); else 5 MiB .. 5 GiB
  bool keep_partial = false;    // a cancelled upload stays resumable instead of aborted
  bool sync = true;             // fdatasync downloads before their rename
  std::vector<std::string> exclude, include;  // uploads of a tree: as pack's filters
  std::string journal_dir;                    // where upload journals live; empty: ~/.cache/nubo/s3
  ProgressFn progress;  // called from one thread; false cancels (Error(cancelled))
  // Bytes per second over every part in flight together (as rclone's --bwlimit, on average
  // over the parts); 0: unlimited.
  double rate = 0;
  // Client-side encryption (docs/s3.md, "Encryption"): uploads are encrypted with the key in
  // this file (keygen makes one), or under a KMS key ("kms:KEY"); downloads of objects
  // encrypted with a key file need it (those under a KMS key, none; "kms-region:REGION" lets
  // KMS be asked in a region other than the configured one).
  std::string key_file;
  S3Options s3;                          // for s3:// (and what applies of it to gs://)
  Symlinks symlinks = Symlinks::follow;  // links in a local tree (above)
  bool follow_outside = false;           // follow links that leave the tree too
};

struct CopySummary {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;          // the files' sizes
  std::uint64_t bytes_sent = 0;     // moved this time
  std::uint64_t bytes_resumed = 0;  // verified by an interrupted attempt, not moved again
  std::uint64_t parts = 0;
  double seconds = 0;
  // Copies between stores: bytes the store copied itself (S3's CopyObject), never through this
  // machine; bytes_sent counts those that went through it.
  std::uint64_t bytes_server_side = 0;
  // Symlinks in the trees copied (Symlinks): followed, stored as links (or restored), skipped.
  std::uint64_t links_followed = 0;
  std::uint64_t links_stored = 0;
  std::uint64_t links_skipped = 0;
};

// `from` and `to` are a local path and a store URL, either way round, or two store URLs:
//  - a file to SCHEME://B/KEY, or to SCHEME://B/PREFIX/ (the file's name appended);
//  - a directory to SCHEME://B/PREFIX/: each file under PREFIX/DIRNAME/..., symlinks as
//    options.symlinks says (followed by default), each counted in the summary;
//  - SCHEME://B/KEY to a file, or into an existing directory;
//  - SCHEME://B/PREFIX/ to a directory: every object under the prefix, its key's rest as the
//    path (keys that would leave the directory are refused);
//  - between stores (buckets, regions, accounts: s3.source_profile and s3.profile), an object
//    to a KEY or a PREFIX/, or every object under a PREFIX/ to another PREFIX/: copied by the
//    store itself when the destination reaches the source with its own credentials, streamed
//    through this machine otherwise (never staged on its disk), resumable and verified
//    (docs/s3.md, "Copies between stores").
// Errors: Error(invalid_argument) for bad URLs, options, or credentials missing or refused (with
// advice), Error(not_found) for a missing bucket, directory or object, Error(unavailable) when
// the store cannot be reached after the retries (run it again: it resumes), Error(corrupt) when
// content does not verify, Error(cancelled).
NUBO_API CopySummary copy(const std::string& from, const std::string& to,
                          const CopyOptions& options = {});

struct SyncOptions {
  CopyOptions copy;           // streams, part size, rate, filters (of the source), profiles, ...
  bool delete_extra = false;  // delete at the destination what the source does not have
  bool dry_run = false;       // decide, and change nothing: `changes` says what would be done
  // With delete_extra, a source that holds nothing (a missing prefix, a typo, everything
  // filtered out) is refused: it would empty the destination. True lets it.
  bool allow_empty_source = false;
  // With delete_extra, more deletions than this are refused before anything changes (as
  // rclone's --max-delete, decided up front); -1: no limit.
  std::int64_t max_delete = -1;
  // What a sync deletes or replaces at the destination is moved here first, under the same
  // relative path (as rclone's --backup-dir): a folder (or file:// URL) for a local
  // destination, a prefix of the same bucket for a store. "": none.
  std::string backup_dir;
  // Called with each change once they are all decided, before any is made ("copy PATH", then
  // "delete PATH"; in a dry run, what would be done), from the calling thread.
  std::function<void(const std::string& change)> change;
};

struct SyncSummary {
  std::uint64_t copied = 0;             // files or objects new or changed (to copy, in a dry run)
  std::uint64_t unchanged = 0;          // already at the destination, the same content
  std::uint64_t deleted = 0;            // with delete_extra (to delete, in a dry run)
  std::uint64_t bytes_copied = 0;       // the sizes of those copied
  std::uint64_t bytes_sent = 0;         // moved through this machine this time
  std::uint64_t bytes_server_side = 0;  // copied by the store itself
  double seconds = 0;
  std::vector<std::string> changes;  // "copy PATH", "delete PATH", in that order
  std::uint64_t backed_up = 0;       // moved to backup_dir before being replaced or deleted
  // Symlinks in the source tree or objects (CopyOptions::symlinks): followed, stored, skipped.
  std::uint64_t links_followed = 0;
  std::uint64_t links_stored = 0;
  std::uint64_t links_skipped = 0;
};

// Makes `to` hold what `from` holds, copying only what is new or changed there: the same size
// and the same content (nubo's XXH3-128 on both sides, else an MD5: an object's ETag, a local
// file's computed), not the modification time alone, as `rclone sync --checksum`. `from` and
// `to` are a local directory or a store PREFIX/, at least one of them a store; the copies are
// copy()'s (within one store, by the store). With delete_extra, what `to` holds and `from` does
// not is deleted once every copy has succeeded, never before. Errors as copy(), and
// Error(invalid_argument) for two local directories, an object URL where a prefix is needed, a
// source and destination (or backup_dir) that are the same or lie one inside the other however
// they are spelled (a path and a file:// URL, a symlink, two profiles of one bucket), a
// delete_extra whose source holds nothing (unless allow_empty_source), or more deletions than
// max_delete; each refused before anything changes.
NUBO_API SyncSummary sync(const std::string& from, const std::string& to,
                          const SyncOptions& options = {});

// The IAM policy (JSON) that `operations` need on `places` and nothing more (docs/s3.md, "Least
// privilege"). places: s3://BUCKET/PREFIX URLs. operations: pack (to a bucket), unpack (and
// list, cat, verify of an archive in one), cp (both ways), sync, checkpoint (nubo-train's
// checkpoints in a bucket), and kms:KEY-ARN for a KMS key their server-side encryption uses. The S3
// client checks every request it makes for these operations against the same table. Error
// (invalid_argument) naming a URL that is not s3://, an unknown operation or a malformed ARN.
NUBO_API std::string access_policy(const std::vector<std::string>& places,
                                   const std::vector<std::string>& operations);

// Whether `text` is a URL of a store copy() knows (s3://, gs://, file://), rather than a local
// path.
NUBO_API bool is_store_url(std::string_view text) noexcept;

}  // namespace nubo::transfer
