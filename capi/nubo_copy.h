/*
 * nubo_copy.h: files and trees to and from object storage through the C ABI (docs/s3.md).
 * Included by nubo.h; the conventions are nubo.h's.
 *
 * nubo_transfer_copy copies between a local path and a store URL (either way round), or between
 * two stores, each file one object, resumable after any interruption and verified end to end. The
 * stores: s3://BUCKET/KEY (configured as the AWS CLI is: AWS_* variables, ~/.aws profiles),
 * gs://BUCKET/KEY (Google Cloud Storage with an HMAC key: GS_ACCESS_KEY_ID and
 * GS_SECRET_ACCESS_KEY, or the boto file), and file:///PATH (a shared file system mounted here).
 */
#ifndef NUBO_COPY_H
#define NUBO_COPY_H

#include "nubo.h"
#include "nubo_transfer.h" /* nubo_transfer_progress_callback */

#ifdef __cplusplus
extern "C" {
#endif

/* What only an S3 store takes: the extension of nubo_transfer_copy_options for s3:// URLs
 * (C++: nubo::transfer::S3Options). */
typedef struct nubo_transfer_s3_options {
  uint32_t struct_size;
  const char* profile;                /* NULL (default): AWS_PROFILE or "default" */
  const char* server_side_encryption; /* NULL, "AES256" or "aws:kms" */
  const char* kms_key_id;             /* with "aws:kms" */
  /* Copies between two stores: the source's profile; NULL (default): the same as `profile`,
     which is then the destination's. */
  const char* source_profile;
} nubo_transfer_s3_options;

/* What a copy or a sync does with a symlink in a local tree it uploads, as aws s3 cp and rclone
 * do; the tree's root itself is always followed (C++: nubo::transfer::Symlinks). */
typedef enum nubo_symlinks {
  /* copy what the link leads to, under its name (the default, as aws s3 cp): a link leaving the
   * tree only with follow_outside; a dangling link or a loop is skipped with a warning */
  NUBO_SYMLINKS_FOLLOW = 0,
  /* store the link itself: an object holding its target (metadata nubo-symlink), restored as a
   * link by a download or sync that also stores links (rclone's --links) */
  NUBO_SYMLINKS_STORE = 1,
  NUBO_SYMLINKS_SKIP = 2, /* leave links out, counted */
  /* not a value: keeps every int a valid nubo_symlinks in C++ */
  NUBO_SYMLINKS_MAX_ENUM = 0x7fffffff
} nubo_symlinks;

/* Options of nubo_transfer_copy (C++: nubo::transfer::CopyOptions). */
typedef struct nubo_transfer_copy_options {
  uint32_t struct_size;
  int streams;                /* parts in flight, 1..64; default 4 */
  uint64_t part_size;         /* 0 (default): adapted to each object; else 5 MiB .. 5 GiB */
  int keep_partial;           /* nonzero: a cancelled upload stays resumable (default 0: aborted) */
  int sync;                   /* nonzero (default): fdatasync downloads before their rename */
  const char* const* exclude; /* uploads of a tree: filter patterns as pack's */
  size_t exclude_count;
  const char* const* include;
  size_t include_count;
  nubo_transfer_progress_callback progress; /* NULL: none; returning 0 cancels */
  void* progress_user;
  double rate; /* bytes/s over every part in flight together; 0 (default): unlimited */
  /* Client-side encryption (docs/s3.md): uploads are encrypted with the key in this file
     (nubo_transfer_keygen makes one), or under a KMS key ("kms:KEY"); downloads of objects
     encrypted with a key file need it (those under a KMS key, none; "kms-region:REGION" lets
     KMS be asked in a region other than the configured one). NULL: none. */
  const char* key_file;
  const char* journal_dir;            /* where upload journals live; NULL: ~/.cache/nubo/s3 */
  const nubo_transfer_s3_options* s3; /* NULL (default): the S3 defaults */
  nubo_symlinks symlinks;             /* links in a local tree; default NUBO_SYMLINKS_FOLLOW */
  int follow_outside; /* nonzero: follow links that leave the tree too (default 0) */
} nubo_transfer_copy_options;

/* What a copy did (C++: nubo::transfer::CopySummary). Set struct_size = sizeof before the
 * call. */
typedef struct nubo_transfer_copy_summary {
  uint32_t struct_size;
  uint64_t files;
  uint64_t bytes;         /* the files' sizes */
  uint64_t bytes_sent;    /* moved this time */
  uint64_t bytes_resumed; /* verified by an interrupted attempt, not moved again */
  uint64_t parts;
  double seconds;
  uint64_t bytes_server_side; /* copies between stores: copied by the store itself */
  uint64_t links_followed;    /* symlinks in the trees copied: followed, */
  uint64_t links_stored;      /* stored as links (or restored as links), */
  uint64_t links_skipped;     /* and left out (dangling, leaving the tree, loops, or asked) */
} nubo_transfer_copy_summary;

NUBO_C_API nubo_status nubo_transfer_copy_options_init(nubo_transfer_copy_options* options,
                                                       size_t struct_size);
NUBO_C_API nubo_status nubo_transfer_s3_options_init(nubo_transfer_s3_options* options,
                                                     size_t struct_size);
/*
 * Copies `from` to `to`: a file or a tree, one of them a store URL (docs/s3.md says which
 * forms). options and summary may be NULL. Errors: NUBO_ERR_INVALID_ARGUMENT (URLs, options,
 * missing or refused credentials, with advice), NUBO_ERR_NOT_FOUND (a bucket, a directory, an
 * object, a local path), NUBO_ERR_UNAVAILABLE (unreachable after the retries: call again to
 * resume), NUBO_ERR_CORRUPT (content that does not verify), NUBO_ERR_IO, NUBO_ERR_CANCELLED.
 */
NUBO_C_API nubo_status nubo_transfer_copy(const char* from, const char* to,
                                          const nubo_transfer_copy_options* options,
                                          nubo_transfer_copy_summary* summary);
/* A change a sync decided: "copy PATH" or "delete PATH", valid during the call only. */
typedef void (*nubo_transfer_change_callback)(const char* change, void* user);
/* Options of nubo_transfer_sync (C++: nubo::transfer::SyncOptions). */
typedef struct nubo_transfer_sync_options {
  uint32_t struct_size;
  const nubo_transfer_copy_options* copy; /* the copies' options; NULL (default): the defaults */
  int delete_extra; /* nonzero: delete at the destination what the source does not have */
  int dry_run;      /* nonzero: decide and change nothing (the counts say what would be done) */
  /* Called with each change once all are decided, before any is made (in a dry run, the list
   * of what would be done), from the calling thread. NULL (default): none. */
  nubo_transfer_change_callback change;
  void* change_user;
  /* nonzero: with delete_extra, let a source that holds nothing empty the destination (refused
   * by default: a missing prefix or a typo would delete everything) */
  int allow_empty_source;
  /* with delete_extra, more deletions than this are refused before any change; -1 (default): no
   * limit */
  int64_t max_delete;
  /* what is deleted or replaced at the destination is moved here first (a folder for a local
   * destination, a prefix of the same bucket for a store); NULL (default): none */
  const char* backup_dir;
} nubo_transfer_sync_options;
/* What a sync did, or would do in a dry run (C++: nubo::transfer::SyncSummary). Set
 * struct_size = sizeof before the call. */
typedef struct nubo_transfer_sync_summary {
  uint32_t struct_size;
  uint64_t copied;            /* new or changed, copied */
  uint64_t unchanged;         /* already there with the same content */
  uint64_t deleted;           /* with delete_extra */
  uint64_t bytes_copied;      /* the sizes of those copied */
  uint64_t bytes_sent;        /* moved through this machine this time */
  uint64_t bytes_server_side; /* copied by the store itself */
  double seconds;
  uint64_t backed_up;      /* moved to backup_dir before being replaced or deleted */
  uint64_t links_followed; /* symlinks of the source: followed, */
  uint64_t links_stored;   /* stored (or restored) as links, */
  uint64_t links_skipped;  /* and left out */
} nubo_transfer_sync_summary;
NUBO_C_API nubo_status nubo_transfer_sync_options_init(nubo_transfer_sync_options* options,
                                                       size_t struct_size);
/*
 * Makes `to` hold what `from` holds, copying only what is new or changed (by size and checksum,
 * not by time alone): a local directory or a store PREFIX/ each, at least one a store. With
 * delete_extra, what `to` has and `from` does not is deleted once every copy has succeeded.
 * options and summary may be NULL. Errors as nubo_transfer_copy's, and
 * NUBO_ERR_INVALID_ARGUMENT for two local directories, an object where a prefix is needed,
 * places (or backup_dir) that are the same or lie one inside the other however spelled, an empty
 * source with delete_extra (unless allow_empty_source), or more deletions than max_delete; each
 * refused before anything changes.
 */
NUBO_C_API nubo_status nubo_transfer_sync(const char* from, const char* to,
                                          const nubo_transfer_sync_options* options,
                                          nubo_transfer_sync_summary* summary);
/*
 * The IAM policy (JSON) that `operations` need on `places` and nothing more (docs/s3.md, "Least
 * privilege"), with the needed-size protocol of nubo_device_report_json. places:
 * s3://BUCKET/PREFIX URLs; operations: "pack", "unpack" (also list, cat, verify), "cp", "sync",
 * "checkpoint", and "kms:KEY-ARN" for a key their server-side encryption uses. Errors:
 * NUBO_ERR_INVALID_ARGUMENT naming a URL that is not s3://, an unknown operation or a malformed
 * ARN.
 */
NUBO_C_API nubo_status nubo_transfer_access_policy(const char* const* places, size_t place_count,
                                                   const char* const* operations,
                                                   size_t operation_count, char* buf,
                                                   size_t capacity, size_t* needed);
/* Whether `text` is a store URL (s3://, gs://, file://) rather than a local path: 1 or 0. */
NUBO_C_API int nubo_transfer_is_store_url(const char* text);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_COPY_H */
