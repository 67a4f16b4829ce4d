/*
 * nubo_net.h: sending files over the network through the C ABI (docs/net.md; the wire protocol
 * is docs/protocol.md). Included by nubo.h; the conventions are nubo.h's.
 *
 *  - nubo_net_send pushes files and directories to a nubo_net_server (or `nubo-xfer serve`) on
 *    another machine. Running it again after an interruption sends only what the receiver has
 *    not verified; files already complete there are skipped. A progress callback may cancel by
 *    returning 0: the call then returns NUBO_ERR_CANCELLED and what was verified stays verified.
 *  - nubo_net_server is a receiving server that listens from nubo_net_server_start until
 *    nubo_net_server_stop or nubo_net_server_free.
 *  - Every connection authenticates with a shared token (HMAC-SHA256 challenge-response); the
 *    token never crosses the wire. NULL or "" takes it from the NUBO_TOKEN environment variable.
 */
#ifndef NUBO_NET_H
#define NUBO_NET_H

#include "nubo.h"
#include "nubo_transfer.h" /* nubo_codec, NUBO_CODEC_SLOTS */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The first fields are those of nubo_transfer_progress (bytes_skipped counts both skipped and
 * resumed bytes); current_file is valid during the call only.
 */
/* What a send's progress callback sees (C++: nubo::net::SendProgress). */
typedef struct nubo_net_progress {
  uint32_t struct_size;
  uint64_t bytes_done;    /* logical bytes finished, skipped and resumed ones included */
  uint64_t bytes_total;   /* logical bytes of the whole send */
  uint64_t bytes_written; /* compressed chunk bytes sent */
  uint64_t bytes_skipped; /* complete at the destination, or verified by an earlier attempt */
  double rate;            /* logical bytes per second over the last seconds */
  double eta_seconds;     /* < 0: none (not known yet) */
  double elapsed_seconds;
  const char* current_file;
  uint64_t files_done;
  uint64_t files_total;
  uint64_t wire_bytes;    /* bytes written to the sockets, framing included */
  double link_rate;       /* wire bytes per second over the last seconds */
  uint64_t bytes_resumed; /* verified by an earlier, interrupted attempt */
} nubo_net_progress;

/*
 * Called from one thread (not necessarily the caller's), at most every 100 ms and once at the
 * end. Return nonzero to go on, 0 to cancel. `progress` is valid during the call only.
 */
typedef int (*nubo_net_progress_callback)(const nubo_net_progress* progress, void* user);

typedef struct nubo_net_send_options {
  uint32_t struct_size;
  nubo_codec codec;       /* default NUBO_CODEC_AUTO: per chunk, fed with the link's throughput */
  int level;              /* 0 (default): the codec's default */
  uint64_t chunk_size;    /* default 4 MiB; 4 KiB .. 64 MiB */
  int threads;            /* compression threads; 0 (default): every core */
  uint64_t memory_limit;  /* bytes of chunks in flight; default 64 MiB */
  int streams;            /* TCP connections in parallel, 1..64; default 4 */
  double rate;            /* wire bytes/s, all streams together; 0 (default): unlimited */
  const char* token;      /* the shared secret; NULL or "" (default): NUBO_TOKEN */
  double timeout_seconds; /* a peer silent this long is given up; default 30 */
  nubo_net_progress_callback progress; /* NULL: none */
  void* progress_user;                 /* passed back to progress unchanged */
  /*
   * TLS 1.3 (docs/net.md, "Encryption"). Nonzero (default): every connection is encrypted,
   * keyed from the token, or with ca_file the server's certificate is checked against that CA
   * and server_name (NULL: the destination's host). 0: in the clear, for trusted links only.
   */
  int encrypt;
  const char* ca_file;
  const char* server_name;
  /* As nubo_transfer_pack_options's. */
  const char* const* exclude;
  size_t exclude_count;
  const char* const* include;
  size_t include_count;
} nubo_net_send_options;

/* What a send did (C++: nubo::net::SendSummary). Set struct_size = sizeof before the call. */
typedef struct nubo_net_send_summary {
  uint32_t struct_size;
  uint64_t files;
  uint64_t directories;
  uint64_t symlinks;
  uint64_t bytes;         /* logical bytes of every file */
  uint64_t bytes_sent;    /* logical bytes of the chunks sent this time */
  uint64_t bytes_skipped; /* files complete and identical at the destination */
  uint64_t bytes_resumed; /* chunks an interrupted attempt had verified */
  uint64_t wire_bytes;    /* bytes written to the sockets */
  uint64_t chunks_sent;
  uint64_t chunks_by_codec[NUBO_CODEC_SLOTS]; /* of chunks_sent, how each was stored */
  int streams;                                /* TCP connections used */
  double seconds;
  uint64_t bytes_deduplicated; /* of bytes_sent: small files identical to one sent before,
                                  which the receiver copied from it */
} nubo_net_send_summary;

NUBO_C_API nubo_status nubo_net_send_options_init(nubo_net_send_options* options,
                                                  size_t struct_size);

/*
 * Sends source_count paths (files, directories recursively, symlinks as links) to the server at
 * `destination`: "HOST:PORT" or "HOST:PORT/SUBDIR" ("[::1]:PORT" for IPv6). "data" arrives as
 * DEST/SUBDIR/data. options and summary may be NULL. Errors: NUBO_ERR_UNAVAILABLE (the server
 * cannot be reached or the connection was lost: call again to resume), NUBO_ERR_INVALID_ARGUMENT
 * (an option, a malformed destination, a refused token), NUBO_ERR_NOT_FOUND (a source),
 * NUBO_ERR_CORRUPT (the server refused an entry, or a file did not verify), NUBO_ERR_CANCELLED.
 */
NUBO_C_API nubo_status nubo_net_send(const char* const* sources, size_t source_count,
                                     const char* destination, const nubo_net_send_options* options,
                                     nubo_net_send_summary* summary);

/* ---- Receiving ---- */

typedef struct nubo_net_server nubo_net_server;

typedef struct nubo_net_server_options {
  uint32_t struct_size;
  const char* listen;     /* "ADDR:PORT"; NULL (default): "127.0.0.1:0", a free loopback port */
  const char* dest;       /* required: every write lands below this directory */
  const char* token;      /* the shared secret; NULL or "" (default): NUBO_TOKEN */
  double timeout_seconds; /* a peer silent this long is given up; default 30 */
  int max_connections;    /* more are refused until some end; default 64 */
  int sync; /* nonzero (default): fdatasync files before renaming them and journal commits */
  /* TLS: every client that offers it gets it, keyed from the token or with this certificate
   * and key (PEM files; NULL: none). require_encryption nonzero refuses clients in the clear. */
  const char* cert_file;
  const char* key_file;
  int require_encryption;
  /* Hostile load: a client has handshake_seconds (default 10) to authenticate; connections
   * not yet authenticated have a budget of max_pending (default 16; when it is full, one that
   * has sent nothing makes way for a newcomer), at most max_pending_per_address (default 4) per
   * address. */
  double handshake_seconds;
  int max_pending;
  int max_pending_per_address;
  int mkdir;                  /* nonzero: create dest when missing (default 0: an error) */
  int preserve_special_modes; /* nonzero: keep setuid, setgid and sticky bits (default 0) */
} nubo_net_server_options;

/* What a server has done since it started (C++: nubo::net::ServerStats). Set struct_size =
   sizeof before the call. */
typedef struct nubo_net_server_stats_info {
  uint32_t struct_size;
  uint64_t connections; /* accepted */
  uint64_t refused;     /* failed authentication, malformed, over the cap, timed out */
  uint64_t sessions;    /* sends completed */
  uint64_t files;       /* files renamed into place */
  uint64_t bytes;       /* logical bytes written */
} nubo_net_server_stats_info;

NUBO_C_API nubo_status nubo_net_server_options_init(nubo_net_server_options* options,
                                                    size_t struct_size);
/*
 * Starts a server listening on options->listen, serving each connection on its own thread.
 * On failure *out is NULL: NUBO_ERR_INVALID_ARGUMENT (no dest, no token, a malformed address),
 * NUBO_ERR_UNAVAILABLE (the address is in use), NUBO_ERR_IO.
 */
NUBO_C_API nubo_status nubo_net_server_start(const nubo_net_server_options* options,
                                             nubo_net_server** out);
/* The port the server listens on (the one chosen for port 0); 0 for NULL. */
NUBO_C_API uint16_t nubo_net_server_port(const nubo_net_server* server);
NUBO_C_API nubo_status nubo_net_server_stats(const nubo_net_server* server,
                                             nubo_net_server_stats_info* out);
/*
 * Stops listening and closes every connection; what was verified stays verified. The stats stay
 * readable. Stopping twice is fine.
 */
NUBO_C_API nubo_status nubo_net_server_stop(nubo_net_server* server);
/* Stops the server if it runs and frees it. NULL is fine. */
NUBO_C_API void nubo_net_server_free(nubo_net_server* server);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_NET_H */
