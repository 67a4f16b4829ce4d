/* The network C ABI from a strict C11 program: a server on a loopback port, a send with a
   progress callback and its summary, a send cancelled from the callback, a wrong token, and the
   bad inputs each entry point must answer with a status and a message.
   Usage: c_net_test WORKDIR (a scratch directory). */
#define _POSIX_C_SOURCE 200809L /* mkdir, nanosleep */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "nubo.h"

static int failures = 0;

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, #cond, \
              nubo_last_error());                                                              \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

static const char* const kToken = "c-test-token-0123456789";

static int contains(const char* haystack, const char* needle) {
  return haystack && strstr(haystack, needle) != NULL;
}

static char* join(const char* a, const char* b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char* s = malloc(n);
  if (s == NULL) abort();
  snprintf(s, n, "%s/%s", a, b);
  return s;
}

static void write_file(const char* path, size_t size, unsigned seed) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) {
    fprintf(stderr, "cannot write %s\n", path);
    abort();
  }
  unsigned x = seed * 2654435761u + 1u;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1103515245u + 12345u;
    /* Half text-like, half noise: something for the codec to do. */
    fputc(i % 2 ? (int)('a' + (i / 7) % 26) : (int)((x >> 16) & 0xff), f);
  }
  fclose(f);
}

static long file_size(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

typedef struct progress_log {
  int calls;
  uint64_t last_wire;
  uint64_t last_done;
  uint64_t total;
  int cancel_after; /* cancel on this call; 0: never */
  int bad;          /* a field out of order */
} progress_log;

static int on_progress(const nubo_net_progress* p, void* user) {
  progress_log* log = user;
  ++log->calls;
  if (p->struct_size != sizeof *p || p->current_file == NULL) log->bad = 1;
  if (p->wire_bytes < log->last_wire || p->bytes_done < log->last_done) log->bad = 1;
  if (p->bytes_done > p->bytes_total || p->link_rate < 0) log->bad = 1;
  log->last_wire = p->wire_bytes;
  log->last_done = p->bytes_done;
  log->total = p->bytes_total;
  return log->cancel_after == 0 || log->calls < log->cancel_after;
}

/* The server counts a session or a refusal on its own thread, right after answering the
   sender: wait (up to 5 s) until the counts reach at least these. */
static void wait_stats(const nubo_net_server* server, uint64_t sessions, uint64_t refused,
                       nubo_net_server_stats_info* out) {
  out->struct_size = sizeof *out;
  for (int i = 0; i < 500; ++i) {
    CHECK(nubo_net_server_stats(server, out) == NUBO_OK);
    if (out->sessions >= sessions && out->refused >= refused) return;
    struct timespec ms10 = {0, 10000000};
    nanosleep(&ms10, NULL);
  }
}

static nubo_net_server* start_server(const char* dest) {
  nubo_net_server_options o;
  CHECK(nubo_net_server_options_init(&o, sizeof o) == NUBO_OK);
  CHECK(o.timeout_seconds == 30 && o.max_connections == 64 && o.sync == 1 && o.listen == NULL);
  o.dest = dest;
  o.token = kToken;
  o.timeout_seconds = 10;
  o.sync = 0;
  nubo_net_server* server = NULL;
  CHECK(nubo_net_server_start(&o, &server) == NUBO_OK);
  CHECK(server != NULL);
  CHECK(nubo_net_server_port(server) != 0);
  return server;
}

static void destination(const nubo_net_server* server, const char* subdir, char* out, size_t n) {
  snprintf(out, n, "127.0.0.1:%u/%s", (unsigned)nubo_net_server_port(server), subdir);
}

static void test_send(nubo_net_server* server, const char* src, const char* dest) {
  char to[64];
  destination(server, "run1", to, sizeof to);
  nubo_net_send_options o;
  CHECK(nubo_net_send_options_init(&o, sizeof o) == NUBO_OK);
  CHECK(o.codec == NUBO_CODEC_AUTO && o.streams == 4 && o.rate == 0 && o.token == NULL);
  o.token = kToken;
  o.streams = 2;
  o.threads = 2;
  o.chunk_size = 64 * 1024;
  o.timeout_seconds = 10;
  progress_log log = {0, 0, 0, 0, 0, 0};
  o.progress = on_progress;
  o.progress_user = &log;
  const char* sources[] = {src};
  nubo_net_send_summary s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  CHECK(nubo_net_send(sources, 1, to, &o, &s) == NUBO_OK);
  CHECK(s.struct_size == sizeof s);
  CHECK(s.files == 4);
  CHECK(s.bytes == 300000 + 5000 + 123 + 5000);
  CHECK(s.bytes_sent == s.bytes && s.bytes_skipped == 0 && s.bytes_resumed == 0);
  CHECK(s.bytes_deduplicated == 5000);
  CHECK(s.wire_bytes > 0 && s.chunks_sent > 0);
  uint64_t counted = 0;
  for (int c = 0; c < NUBO_CODEC_SLOTS; ++c) counted += s.chunks_by_codec[c];
  CHECK(counted == s.chunks_sent);
  CHECK(s.chunks_by_codec[NUBO_CODEC_AUTO] == 0); /* a choice, never how a chunk is stored */
  CHECK(s.streams >= 1 && s.streams <= 2 && s.seconds >= 0);
  CHECK(log.calls >= 1 && !log.bad && log.total == s.bytes && log.last_done == s.bytes);
  CHECK(log.last_wire > 0);

  char* got = join(dest, "run1/tree/big.bin");
  CHECK(file_size(got) == 300000);
  free(got);
  got = join(dest, "run1/tree/sub/small.txt");
  CHECK(file_size(got) == 5000);
  free(got);

  /* Again: everything is already there. */
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  o.progress = NULL;
  CHECK(nubo_net_send(sources, 1, to, &o, &s) == NUBO_OK);
  CHECK(s.bytes_skipped == s.bytes && s.bytes_sent == 0);

  /* A summary of an older, shorter layout: nothing written past it. */
  struct {
    nubo_net_send_summary s;
    unsigned char guard[16];
  } small;
  memset(&small, 0xab, sizeof small);
  small.s.struct_size = 4 + 4 + 8; /* struct_size, padding, files */
  CHECK(nubo_net_send(sources, 1, to, &o, &small.s) == NUBO_OK);
  CHECK(small.s.files == 4);
  CHECK(small.s.directories == 0xababababababababull);

  nubo_net_server_stats_info st;
  wait_stats(server, 3, 0, &st);
  CHECK(st.sessions >= 3 && st.files == 4 && st.connections >= 3 && st.bytes == s.bytes);
}

static void test_cancel(nubo_net_server* server, const char* src) {
  char to[64];
  destination(server, "cancelled", to, sizeof to);
  nubo_net_send_options o;
  CHECK(nubo_net_send_options_init(&o, sizeof o) == NUBO_OK);
  o.token = kToken;
  o.streams = 1;
  o.threads = 1;
  o.chunk_size = 4096;
  o.rate = 200000; /* slow enough that the callback runs before the end */
  o.timeout_seconds = 10;
  progress_log log = {0, 0, 0, 0, 1, 0};
  o.progress = on_progress;
  o.progress_user = &log;
  const char* sources[] = {src};
  CHECK(nubo_net_send(sources, 1, to, &o, NULL) == NUBO_ERR_CANCELLED);
  CHECK(log.calls >= 1);
  CHECK(strlen(nubo_last_error()) > 0);
}

static void test_wrong_token(nubo_net_server* server, const char* src) {
  char to[64];
  destination(server, "wrong", to, sizeof to);
  nubo_net_send_options o;
  CHECK(nubo_net_send_options_init(&o, sizeof o) == NUBO_OK);
  o.token = "not-the-token";
  o.timeout_seconds = 10;
  const char* sources[] = {src};
  nubo_status st = nubo_net_send(sources, 1, to, &o, NULL);
  CHECK(st == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "token"));
  nubo_net_server_stats_info stats;
  wait_stats(server, 0, 1, &stats);
  CHECK(stats.refused >= 1);
}

static void test_bad_arguments(nubo_net_server* server, const char* src, const char* dest) {
  const char* sources[] = {src};
  const char* null_source[] = {NULL};
  char to[64];
  destination(server, "bad", to, sizeof to);
  nubo_net_send_options o;
  CHECK(nubo_net_send_options_init(NULL, sizeof o) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "options is NULL"));
  CHECK(nubo_net_send_options_init(&o, 0) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "struct_size"));
  CHECK(nubo_net_send_options_init(&o, sizeof o) == NUBO_OK);
  o.token = kToken;

  CHECK(nubo_net_send(NULL, 1, to, &o, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "sources is NULL"));
  CHECK(nubo_net_send(sources, 0, to, &o, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "source_count is 0"));
  CHECK(nubo_net_send(null_source, 1, to, &o, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "sources[0] is NULL"));
  CHECK(nubo_net_send(sources, 1, NULL, &o, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "destination is NULL"));
  CHECK(nubo_net_send(sources, 1, "no-port-here", &o, NULL) == NUBO_ERR_INVALID_ARGUMENT);

  nubo_net_send_options zero = o;
  zero.struct_size = 0;
  CHECK(nubo_net_send(sources, 1, to, &zero, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "nubo_net_send_options_init"));
  nubo_net_send_summary s;
  s.struct_size = 0;
  CHECK(nubo_net_send(sources, 1, to, &o, &s) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "summary->struct_size"));
  nubo_net_send_options bad_codec = o;
  bad_codec.codec = (nubo_codec)42;
  CHECK(nubo_net_send(sources, 1, to, &bad_codec, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "codec"));

  nubo_net_server_options so;
  CHECK(nubo_net_server_options_init(&so, 0) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_net_server_options_init(&so, sizeof so) == NUBO_OK);
  nubo_net_server* server2 = (nubo_net_server*)&so; /* must be set to NULL on failure */
  CHECK(nubo_net_server_start(&so, &server2) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(server2 == NULL);
  CHECK(contains(nubo_last_error(), "dest"));
  CHECK(nubo_net_server_start(NULL, &server2) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_net_server_start(&so, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  so.dest = dest;
  so.token = kToken;
  so.listen = "127.0.0.1:not-a-port";
  CHECK(nubo_net_server_start(&so, &server2) != NUBO_OK);
  CHECK(server2 == NULL);
  so.struct_size = 0;
  CHECK(nubo_net_server_start(&so, &server2) == NUBO_ERR_INVALID_ARGUMENT);

  nubo_net_server_stats_info st;
  st.struct_size = sizeof st;
  CHECK(nubo_net_server_stats(NULL, &st) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_net_server_stats(server, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  st.struct_size = 0;
  CHECK(nubo_net_server_stats(server, &st) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_net_server_port(NULL) == 0);
  CHECK(nubo_net_server_stop(NULL) == NUBO_ERR_INVALID_ARGUMENT);
  nubo_net_server_free(NULL);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WORKDIR\n", argv[0]);
    return 2;
  }
  const char* work = argv[1];
  mkdir(work, 0700);
  char* src = join(work, "tree");
  char* sub = join(src, "sub");
  char* dest = join(work, "dest");
  mkdir(src, 0700);
  mkdir(sub, 0700);
  mkdir(dest, 0700);
  char* f1 = join(src, "big.bin");
  char* f2 = join(sub, "small.txt");
  char* f3 = join(src, "tiny");
  char* f4 = join(sub, "t_copy");
  write_file(f1, 300000, 1);
  write_file(f2, 5000, 2);
  write_file(f3, 123, 3);
  write_file(f4, 5000, 2); /* small.txt again: sent as a copy */

  nubo_net_server* server = start_server(dest);
  if (server != NULL) {
    test_send(server, src, dest);
    test_cancel(server, f1);
    test_wrong_token(server, src);
    test_bad_arguments(server, src, dest);
    CHECK(nubo_net_server_stop(server) == NUBO_OK);
    CHECK(nubo_net_server_stop(server) == NUBO_OK);
    nubo_net_server_stats_info st;
    st.struct_size = sizeof st;
    CHECK(nubo_net_server_stats(server, &st) == NUBO_OK);
    CHECK(st.sessions >= 3);
    nubo_net_server_free(server);
  }
  free(f1);
  free(f2);
  free(f3);
  free(f4);
  free(src);
  free(sub);
  free(dest);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c_net_test: all checks passed\n");
  return 0;
}
