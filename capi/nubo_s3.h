/*
 * nubo_s3.h: files and trees to and from S3-compatible object storage through the C ABI
 * (docs/s3.md). Included by nubo.h; the conventions are nubo.h's.
 *
 * nubo_s3_copy is nubo_transfer_copy (nubo_copy.h) with the S3 options among the others, kept
 * until the next ABI break (docs/abi.md).
 */
#ifndef NUBO_S3_H
#define NUBO_S3_H

#include "nubo.h"
#include "nubo_copy.h"
#include "nubo_transfer.h" /* nubo_transfer_progress_callback */

#ifdef __cplusplus
extern "C" {
#endif

/* Options of nubo_s3_copy (C++: nubo::s3::CopyOptions). */
typedef struct nubo_s3_copy_options {
  uint32_t struct_size;
  int streams;         /* parts in flight, 1..64; default 4 */
  uint64_t part_size;  /* 0 (default): adapted to each object; else 5 MiB .. 5 GiB */
  int keep_partial;    /* nonzero: a cancelled upload stays resumable (default 0: aborted) */
  int sync;            /* nonzero (default): fdatasync downloads before their rename */
  const char* profile; /* NULL (default): AWS_PROFILE or "default" */
  const char* server_side_encryption; /* NULL, "AES256" or "aws:kms" */
  const char* kms_key_id;             /* with "aws:kms" */
  const char* const* exclude;         /* uploads of a tree: filter patterns as pack's */
  size_t exclude_count;
  const char* const* include;
  size_t include_count;
  nubo_transfer_progress_callback progress; /* NULL: none; returning 0 cancels */
  void* progress_user;
  double rate; /* bytes/s over every part in flight together; 0 (default): unlimited */
  /* Client-side encryption (docs/s3.md): uploads are encrypted with the key in this file
     (nubo_transfer_keygen makes one), or under a KMS key ("kms:KEY"); downloads of objects
     encrypted with a key file need it (those under a KMS key, none). NULL: none. */
  const char* key_file;
} nubo_s3_copy_options;

/* What a copy did (C++: nubo::transfer::CopySummary). Set struct_size = sizeof before the
 * call. */
typedef struct nubo_s3_copy_summary {
  uint32_t struct_size;
  uint64_t files;
  uint64_t bytes;         /* the files' sizes */
  uint64_t bytes_sent;    /* moved this time */
  uint64_t bytes_resumed; /* verified by an interrupted attempt, not moved again */
  uint64_t parts;
  double seconds;
} nubo_s3_copy_summary;

NUBO_C_API nubo_status nubo_s3_copy_options_init(nubo_s3_copy_options* options, size_t struct_size);
/*
 * Copies `from` to `to`: a file or a tree, one of them an s3:// URL (docs/s3.md says which
 * forms). options and summary may be NULL. Errors: NUBO_ERR_INVALID_ARGUMENT (URLs, options,
 * missing or refused credentials, with advice), NUBO_ERR_NOT_FOUND (a bucket, an object, a local
 * path), NUBO_ERR_UNAVAILABLE (unreachable after the retries: call again to resume),
 * NUBO_ERR_CORRUPT (content that does not verify), NUBO_ERR_IO, NUBO_ERR_CANCELLED.
 */
NUBO_C_API nubo_status nubo_s3_copy(const char* from, const char* to,
                                    const nubo_s3_copy_options* options,
                                    nubo_s3_copy_summary* summary);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_S3_H */
