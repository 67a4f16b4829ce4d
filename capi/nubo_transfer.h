/*
 * nubo_transfer.h: compressed, resumable archives through the C ABI (docs/transfer.md; the
 * format is docs/archive-format.md). Included by nubo.h; the conventions are nubo.h's.
 *
 *  - nubo_transfer_pack, nubo_transfer_unpack and nubo_transfer_verify take a sized options struct
 * (NULL: defaults) and fill an optional summary. A progress callback may cancel by returning 0: the
 * call then returns NUBO_ERR_CANCELLED and what was done stays resumable.
 *  - nubo_transfer_archive is an open archive for listing and random access; several threads may
 * read one at once.
 */
#ifndef NUBO_TRANSFER_H
#define NUBO_TRANSFER_H

#include "nubo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How chunks are compressed (C++: nubo::transfer::Codec). */
typedef enum nubo_codec {
  /* per chunk, among none, lz4, zstd levels and float, for the rate the output takes
   * (C++: automatic) */
  NUBO_CODEC_AUTO = 0,
  NUBO_CODEC_NONE = 1, /* stored as it is */
  NUBO_CODEC_LZ4 = 2,
  NUBO_CODEC_ZSTD = 3, /* the default: level 3, small and the same on every run */
  /* how a chunk of zeros is stored (its length alone): summaries count it, no option chooses it */
  NUBO_CODEC_ZERO = 4,
  /* zstd over the byte planes of bf16, fp16 or fp32 values (exponents together): for
   * checkpoints and model weights, exact for every bit pattern (C++: floats) */
  NUBO_CODEC_FLOAT = 5,
  /* not a value: keeps every int a valid nubo_codec in C++ */
  NUBO_CODEC_MAX_ENUM = 0x7fffffff
} nubo_codec;

/*
 * Codec names, as --codec spells them: "auto", "none", "lz4", "zstd", "float" ("zero" is a
 * name, not a choice).
 *  - nubo_transfer_codec_from_name: any case, surrounding blanks ignored; a name no codec has,
 *    or "zero", is NUBO_ERR_INVALID_ARGUMENT listing the codecs to choose.
 *  - nubo_transfer_codec_name: a static NUL-terminated name; "unknown" for a value no codec has.
 */
NUBO_C_API nubo_status nubo_transfer_codec_from_name(const char* name, nubo_codec* out);
NUBO_C_API const char* nubo_transfer_codec_name(nubo_codec codec);

/* A codec as users choose it (C++: nubo::transfer::CodecInfo). */
typedef struct nubo_codec_info {
  uint32_t struct_size;
  nubo_codec codec;
  const char* name; /* as nubo_transfer_codec_from_name takes it */
  int min_level;    /* min, max and default all 0: it takes no level */
  int max_level;
  int default_level;
  const char* level_means; /* what a level is when not the codec's own; "" otherwise */
  const char* help;        /* a few words on when to choose it; "" when its name says it */
} nubo_codec_info;

/* The codecs users may choose, in the order they are offered (index 0 .. count - 1): tools
   read names, levels and help from this table rather than restating them. */
NUBO_C_API size_t nubo_transfer_codec_count(void);
NUBO_C_API nubo_status nubo_transfer_codec_info(size_t index, nubo_codec_info* out);

/* What a progress callback sees. current_file is valid during the call only. */
/* The length of every per-codec array (chunks_by_codec), indexed by nubo_codec: room for codecs
 * to come without moving the fields after it. Slot NUBO_CODEC_AUTO is always 0. */
#define NUBO_CODEC_SLOTS 8

/* What a progress callback sees (C++: nubo::transfer::Progress). */
typedef struct nubo_transfer_progress {
  uint32_t struct_size;
  uint64_t bytes_done;    /* logical bytes finished, skipped ones included */
  uint64_t bytes_total;   /* logical bytes of the whole job */
  uint64_t bytes_written; /* compressed bytes written (pack) or read (unpack, verify) */
  uint64_t bytes_skipped; /* done by an earlier, interrupted attempt */
  double rate;            /* logical bytes per second over the last seconds */
  double eta_seconds;     /* < 0: none (not known yet) */
  double elapsed_seconds;
  const char* current_file;
  uint64_t files_done;
  uint64_t files_total;
} nubo_transfer_progress;

/*
 * Called from one thread (not necessarily the caller's), at most every 100 ms and once at the
 * end. Return nonzero to go on, 0 to cancel. `progress` is valid during the call only.
 */
typedef int (*nubo_transfer_progress_callback)(const nubo_transfer_progress* progress, void* user);

/* Options of nubo_transfer_pack (C++: nubo::transfer::PackOptions). */
typedef struct nubo_transfer_pack_options {
  uint32_t struct_size;
  nubo_codec codec;      /* default NUBO_CODEC_ZSTD (level 3): small and the same on every run */
  int level;             /* 0: the codec's default (zstd 3, lz4 1); AUTO: highest zstd level */
  uint64_t chunk_size;   /* default 4 MiB; 4 KiB .. 64 MiB */
  int threads;           /* compression threads; 0 (default): every core */
  uint64_t memory_limit; /* bytes of buffers in flight; default 64 MiB */
  double target_rate;    /* bytes/s the output can take, for AUTO; 0 (default): measure it */
  int resume;            /* nonzero (default): continue an interrupted pack */
  int sync;              /* nonzero (default): fdatasync at checkpoints and at the end */
  nubo_transfer_progress_callback progress; /* NULL: none */
  void* progress_user;                      /* passed back to progress unchanged */
  /* Filters as rsync's --exclude/--include (docs/transfer.md): entries matching one of the
   * exclude_count patterns are left out unless one of the include_count patterns matches. */
  const char* const* exclude;
  size_t exclude_count;
  const char* const* include;
  size_t include_count;
  /* Encrypt with the key in this file (nubo_transfer_keygen): AES-256-GCM under a data key of
   * the archive's own that the key wraps (docs/archive-format.md); or "kms:KEY" (a KMS key id,
   * alias/NAME or ARN): the wrapping key comes from AWS KMS, and readers need no key. NULL
   * (default): not encrypted. */
  const char* key_file;
  /* Packing to a store: nonzero keeps a cancelled upload on the server for a rerun to continue;
   * 0 (default) aborts it. A local pack keeps its .part either way. */
  int keep_partial;
  /* Nonzero: an archive already there that is what this pack would make of the sources now
   * (nubo_transfer_archive_difference says none) is kept, and the summary says up_to_date;
   * 0 (default): it is replaced. */
  int skip_unchanged;
} nubo_transfer_pack_options;

/* Options of nubo_transfer_unpack (C++: nubo::transfer::UnpackOptions). */
typedef struct nubo_transfer_unpack_options {
  uint32_t struct_size;
  int threads;           /* 0 (default): every core */
  uint64_t memory_limit; /* default 64 MiB */
  int resume;            /* nonzero (default): keep what an interrupted unpack verified */
  int sync;              /* nonzero (default): fdatasync each file before renaming it */
  nubo_transfer_progress_callback progress;
  void* progress_user;
  int preserve_special_modes; /* nonzero: keep setuid, setgid and sticky bits (default 0) */
  const char*
      key_file; /* an encrypted archive's key file, kms:KEY or kms-region:REGION; NULL: none */
} nubo_transfer_unpack_options;

/* Options of nubo_transfer_verify (C++: nubo::transfer::VerifyOptions). */
typedef struct nubo_transfer_verify_options {
  uint32_t struct_size;
  int threads;
  uint64_t memory_limit;
  nubo_transfer_progress_callback progress;
  void* progress_user;
  const char*
      key_file; /* an encrypted archive's key file, kms:KEY or kms-region:REGION; NULL: none */
} nubo_transfer_verify_options;

/* What an operation did (C++: nubo::transfer::Summary). Set struct_size = sizeof before the
 * call. */
typedef struct nubo_transfer_summary {
  uint32_t struct_size;
  uint64_t files;
  uint64_t directories;
  uint64_t symlinks;
  uint64_t bytes;         /* logical bytes of file content */
  uint64_t bytes_stored;  /* the archive's size */
  uint64_t bytes_skipped; /* already done by an interrupted attempt, or up to date */
  uint64_t chunks;
  uint64_t chunks_by_codec[NUBO_CODEC_SLOTS]; /* of chunks, how each was stored */
  double seconds;
  int resumed; /* nonzero: an interrupted attempt was continued */
  /* Bytes moved over the network: uploaded by a pack to a store, fetched from a store by unpack
   * and verify; 0 for local archives. */
  uint64_t bytes_transferred;
  /* Nonzero: a pack with skip_unchanged found the archive already made; nothing was written. */
  int up_to_date;
  /* Seconds the work waited on the network (ranges from a store, parts to it), summed over the
   * threads that waited; 0 for local archives. */
  double network_wait_seconds;
} nubo_transfer_summary;

/* Writes a fresh random key (64 hexadecimal digits, mode 0600) to `path` for key_file; never
 * replaces an existing file (NUBO_ERR_INVALID_ARGUMENT). */
NUBO_C_API nubo_status nubo_transfer_keygen(const char* path);

NUBO_C_API nubo_status nubo_transfer_pack_options_init(nubo_transfer_pack_options* options,
                                                       size_t struct_size);
NUBO_C_API nubo_status nubo_transfer_unpack_options_init(nubo_transfer_unpack_options* options,
                                                         size_t struct_size);
NUBO_C_API nubo_status nubo_transfer_verify_options_init(nubo_transfer_verify_options* options,
                                                         size_t struct_size);

/*
 * Packs source_count paths (files, directories recursively, symlinks as links) into `archive`.
 * summary may be NULL. Errors: NUBO_ERR_INVALID_ARGUMENT (an option, an empty list),
 * NUBO_ERR_NOT_FOUND (a source), NUBO_ERR_IO, NUBO_ERR_CANCELLED, NUBO_ERR_UNAVAILABLE (another
 * process is packing into the same archive).
 */
NUBO_C_API nubo_status nubo_transfer_pack(const char* const* sources, size_t source_count,
                                          const char* archive,
                                          const nubo_transfer_pack_options* options,
                                          nubo_transfer_summary* summary);
/*
 * Whether `archive` is what packing `sources` with `options` would make of them now, as rsync's
 * quick check decides (the entries' kinds, sizes, modification times, modes and link targets;
 * the chunk size; the encryption): into `buf`, "" when it is, else the first difference
 * ("'src/a.txt': its size changed"). The buffer as nubo_cost_meter_line's. NUBO_ERR_NOT_FOUND
 * when there is no such archive, NUBO_ERR_CORRUPT when it is damaged or incomplete.
 */
NUBO_C_API nubo_status nubo_transfer_archive_difference(const char* archive,
                                                        const char* const* sources,
                                                        size_t source_count,
                                                        const nubo_transfer_pack_options* options,
                                                        char* buf, size_t capacity, size_t* needed);
/*
 * Unpacks `archive` into `directory` (created if missing). NUBO_ERR_CORRUPT for a damaged
 * archive or one with unsafe paths or links (refused before anything is written).
 */
NUBO_C_API nubo_status nubo_transfer_unpack(const char* archive, const char* directory,
                                            const nubo_transfer_unpack_options* options,
                                            nubo_transfer_summary* summary);
/* Checks every checksum of `archive`, writing nothing. NUBO_ERR_CORRUPT names the first fault. */
NUBO_C_API nubo_status nubo_transfer_verify(const char* archive,
                                            const nubo_transfer_verify_options* options,
                                            nubo_transfer_summary* summary);

/* ---- Reading an archive ---- */

typedef struct nubo_transfer_archive nubo_transfer_archive;

/* What an archive's entry is (C++: nubo::transfer::EntryKind). */
typedef enum nubo_entry_kind {
  NUBO_ENTRY_FILE = 0,
  NUBO_ENTRY_DIRECTORY = 1,
  NUBO_ENTRY_SYMLINK = 2,
  /* not a value: keeps every int a valid nubo_entry_kind in C++ */
  NUBO_ENTRY_KIND_MAX_ENUM = 0x7fffffff
} nubo_entry_kind;

/* One entry of an archive, its text the archive's (C++: nubo::transfer::Entry). */
typedef struct nubo_transfer_archive_entry_info {
  uint32_t struct_size;
  nubo_entry_kind kind;
  const char* path;        /* relative, '/'-separated */
  uint64_t size;           /* files: content bytes */
  uint32_t mode;           /* permission bits */
  int64_t mtime_ns;        /* nanoseconds since the epoch */
  const char* link_target; /* symlinks; "" otherwise */
  const char* hash;        /* files: XXH3-128 of the content, 32 hex digits; "" otherwise */
  uint64_t stored_size;    /* files: compressed bytes in the archive */
  uint64_t chunks;
} nubo_transfer_archive_entry_info;

/* Opens `path` and reads its index. On failure *out is NULL (NUBO_ERR_CORRUPT, _NOT_FOUND...). */
NUBO_C_API nubo_status nubo_transfer_archive_open(const char* path, nubo_transfer_archive** out);
/* The same for an encrypted archive: key_file is its key (NULL: none, as
 * nubo_transfer_archive_open). Without the right key: NUBO_ERR_INVALID_ARGUMENT, the message naming
 * the key it needs. */
NUBO_C_API nubo_status nubo_transfer_archive_open_with_key(const char* path, const char* key_file,
                                                           nubo_transfer_archive** out);
NUBO_C_API void nubo_transfer_archive_free(nubo_transfer_archive* archive);
/* Number of entries; 0 for NULL. */
NUBO_C_API size_t nubo_transfer_archive_entry_count(const nubo_transfer_archive* archive);
/* Fills *out (out->struct_size set by the caller) with entry `index`. */
NUBO_C_API nubo_status nubo_transfer_archive_entry(const nubo_transfer_archive* archive,
                                                   size_t index,
                                                   nubo_transfer_archive_entry_info* out);
/* The index of the entry at `path`: NUBO_ERR_NOT_FOUND when there is none. */
NUBO_C_API nubo_status nubo_transfer_archive_find(const nubo_transfer_archive* archive,
                                                  const char* path, size_t* index);
/*
 * Reads up to `capacity` bytes of the file at `path` from `offset` into buf; *read receives the
 * count (fewer only at the end of the file, 0 at or past it). NUBO_ERR_NOT_FOUND: no such entry;
 * NUBO_ERR_INVALID_ARGUMENT: not a file; NUBO_ERR_CORRUPT: a chunk failed its checksum.
 */
NUBO_C_API nubo_status nubo_transfer_archive_read(const nubo_transfer_archive* archive,
                                                  const char* path, uint64_t offset, void* buf,
                                                  size_t capacity, size_t* read);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_TRANSFER_H */
