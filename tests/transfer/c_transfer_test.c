/* The transfer C ABI from C11: pack, list, read, verify, unpack, cancellation through the
 * callback, and bad inputs. Usage: c_transfer_test WORKDIR (created, reused). */
#include <nubo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int failures = 0;
#define CHECK(cond)                                                                           \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, \
              nubo_last_error());                                                             \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

static int calls = 0;
static int count_progress(const nubo_transfer_progress* p, void* user) {
  CHECK(p->struct_size >= sizeof(uint32_t));
  CHECK(p->bytes_done <= p->bytes_total);
  CHECK(p->current_file != NULL);
  ++*(int*)user;
  return 1;
}
static int cancel_at_once(const nubo_transfer_progress* p, void* user) {
  (void)p;
  (void)user;
  return 0;
}

int main(int argc, char** argv) {
  char src[4096], archive[4096], out[4096], file[4096], key[4096], sealed[4096], cmd[8400];
  const char* sources[1];
  const char* data = "hello from C, hello from C, hello from C\n";
  FILE* f;
  nubo_transfer_pack_options po;
  nubo_transfer_unpack_options uo;
  nubo_transfer_verify_options vo;
  nubo_transfer_summary summary;
  nubo_transfer_archive* a = NULL;
  nubo_transfer_archive_entry_info info;
  size_t index = 99, got = 0;
  char buf[256];

  if (argc < 2) return 2;
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/src'", argv[1], argv[1]);
  if (system(cmd) != 0) return 2;
  snprintf(src, sizeof src, "%s/src", argv[1]);
  snprintf(archive, sizeof archive, "%s/c.nubo", argv[1]);
  snprintf(out, sizeof out, "%s/out", argv[1]);
  snprintf(file, sizeof file, "%s/src/hello.txt", argv[1]);
  f = fopen(file, "w");
  fputs(data, f);
  fclose(f);
  sources[0] = src;

  /* Options: init, defaults, bad sizes. */
  CHECK(nubo_transfer_pack_options_init(&po, sizeof po) == NUBO_OK);
  CHECK(po.codec == NUBO_CODEC_ZSTD && po.chunk_size == 4u << 20 && po.resume && po.sync);
  CHECK(nubo_transfer_pack_options_init(&po, 0) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_transfer_pack_options_init(NULL, sizeof po) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_transfer_unpack_options_init(&uo, sizeof uo) == NUBO_OK);
  CHECK(nubo_transfer_verify_options_init(&vo, sizeof vo) == NUBO_OK);

  /* Pack with a progress callback. */
  nubo_transfer_pack_options_init(&po, sizeof po);
  po.codec = NUBO_CODEC_ZSTD;
  po.level = 5;
  po.sync = 0;
  po.progress = count_progress;
  po.progress_user = &calls;
  summary.struct_size = sizeof summary;
  CHECK(nubo_transfer_pack(sources, 1, archive, &po, &summary) == NUBO_OK);
  CHECK(summary.files == 1 && summary.directories == 1);
  CHECK(summary.bytes == strlen(data));
  /* One zstd chunk, counted in its codec's slot of chunks_by_codec. */
  CHECK(summary.chunks == 1 &&
        summary.chunks_by_codec[NUBO_CODEC_ZSTD] + summary.chunks_by_codec[NUBO_CODEC_NONE] == 1);
  CHECK(summary.chunks_by_codec[NUBO_CODEC_AUTO] == 0 &&
        summary.chunks_by_codec[NUBO_CODEC_ZERO] == 0);
  CHECK(calls >= 2);

  /* The archive is what packing its source makes now: no difference, until the source changes. */
  CHECK(nubo_transfer_archive_difference(archive, sources, 1, NULL, buf, sizeof buf, &got) ==
        NUBO_OK);
  CHECK(buf[0] == '\0' && got == 1);
  po.skip_unchanged = 1;
  CHECK(nubo_transfer_pack(sources, 1, archive, &po, &summary) == NUBO_OK);
  CHECK(summary.up_to_date && summary.files == 1 && summary.bytes_skipped == strlen(data));
  po.skip_unchanged = 0;
  f = fopen(file, "a");
  fputs("more\n", f);
  fclose(f);
  CHECK(nubo_transfer_archive_difference(archive, sources, 1, NULL, buf, sizeof buf, &got) ==
        NUBO_OK);
  CHECK(strstr(buf, "src/hello.txt': its size changed") != NULL);
  CHECK(nubo_transfer_archive_difference("/nonexistent.nubo", sources, 1, NULL, buf, sizeof buf,
                                         &got) == NUBO_ERR_NOT_FOUND);
  f = fopen(file, "w");
  fputs(data, f);
  fclose(f);

  /* Bad inputs. */
  CHECK(nubo_transfer_pack(NULL, 1, archive, NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "sources is NULL") != NULL);
  CHECK(nubo_transfer_pack(sources, 0, archive, NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_transfer_pack(sources, 1, NULL, NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  po.codec = (nubo_codec)42;
  CHECK(nubo_transfer_pack(sources, 1, archive, &po, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "options->codec") != NULL);
  po.codec = NUBO_CODEC_ZERO; /* how zero chunks are stored, not a choice */
  CHECK(nubo_transfer_pack(sources, 1, archive, &po, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "not a codec to choose") != NULL);
  po.codec = NUBO_CODEC_ZSTD;
  {
    nubo_codec named = NUBO_CODEC_AUTO;
    CHECK(nubo_transfer_codec_from_name(" LZ4 ", &named) == NUBO_OK && named == NUBO_CODEC_LZ4);
    CHECK(nubo_transfer_codec_from_name("zero", &named) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(strstr(nubo_last_error(), "use auto, zstd, lz4, float or none") != NULL);
    CHECK(nubo_transfer_codec_from_name("gzip", &named) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(nubo_transfer_codec_from_name(NULL, &named) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(nubo_transfer_codec_from_name("zstd", NULL) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(nubo_transfer_codec_name(NUBO_CODEC_ZSTD), "zstd") == 0);
    CHECK(strcmp(nubo_transfer_codec_name(NUBO_CODEC_ZERO), "zero") == 0);
    /* The codec table: every name offered reads back as its codec; zero is not offered. */
    const size_t codecs = nubo_transfer_codec_count();
    CHECK(codecs >= 5);
    for (size_t i = 0; i < codecs; ++i) {
      nubo_codec_info info;
      info.struct_size = sizeof info;
      CHECK(nubo_transfer_codec_info(i, &info) == NUBO_OK);
      CHECK(nubo_transfer_codec_from_name(info.name, &named) == NUBO_OK && named == info.codec);
      CHECK(info.codec != NUBO_CODEC_ZERO && info.min_level <= info.default_level &&
            info.default_level <= info.max_level);
    }
    nubo_codec_info past;
    past.struct_size = sizeof past;
    CHECK(nubo_transfer_codec_info(codecs, &past) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(strstr(nubo_last_error(), "out of range") != NULL);
    CHECK(nubo_transfer_codec_info(0, NULL) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(nubo_transfer_codec_name((nubo_codec)42), "unknown") == 0);
  }
  po.exclude_count = 1; /* with no array */
  CHECK(nubo_transfer_pack(sources, 1, archive, &po, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "options->exclude is NULL") != NULL);
  {
    const char* bad[] = {"[unclosed"};
    po.exclude = bad;
    CHECK(nubo_transfer_pack(sources, 1, archive, &po, NULL) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(strstr(nubo_last_error(), "'[unclosed'") != NULL);
    po.exclude = NULL;
    po.exclude_count = 0;
  }
  po.chunk_size = 10;
  CHECK(nubo_transfer_pack(sources, 1, archive, &po, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "chunk size") != NULL);
  summary.struct_size = 0;
  CHECK(nubo_transfer_verify(archive, NULL, &summary) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_transfer_verify("/nonexistent/x.nubo", NULL, NULL) == NUBO_ERR_NOT_FOUND);

  /* Cancellation: the callback's first call returns 0. */
  nubo_transfer_pack_options_init(&po, sizeof po);
  po.progress = cancel_at_once;
  snprintf(file, sizeof file, "%s/cancelled.nubo", argv[1]);
  CHECK(nubo_transfer_pack(sources, 1, file, &po, NULL) == NUBO_ERR_CANCELLED);

  /* List and read. */
  CHECK(nubo_transfer_archive_open(archive, &a) == NUBO_OK);
  CHECK(nubo_transfer_archive_entry_count(a) == 2);
  CHECK(nubo_transfer_archive_entry_count(NULL) == 0);
  info.struct_size = sizeof info;
  CHECK(nubo_transfer_archive_entry(a, 1, &info) == NUBO_OK);
  CHECK(info.kind == NUBO_ENTRY_FILE && strcmp(info.path, "src/hello.txt") == 0);
  CHECK(info.size == strlen(data) && strlen(info.hash) == 32);
  CHECK(nubo_transfer_archive_entry(a, 2, &info) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_transfer_archive_find(a, "src/hello.txt", &index) == NUBO_OK && index == 1);
  CHECK(nubo_transfer_archive_find(a, "nope", &index) == NUBO_ERR_NOT_FOUND);
  CHECK(nubo_transfer_archive_read(a, "src/hello.txt", 6, buf, 4, &got) == NUBO_OK);
  CHECK(got == 4 && memcmp(buf, "from", 4) == 0);
  CHECK(nubo_transfer_archive_read(a, "src/hello.txt", 1000, buf, sizeof buf, &got) == NUBO_OK &&
        got == 0);
  CHECK(nubo_transfer_archive_read(a, "src", 0, buf, sizeof buf, &got) ==
        NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_transfer_archive_read(a, "src/hello.txt", 0, NULL, 10, &got) ==
        NUBO_ERR_INVALID_ARGUMENT);
  nubo_transfer_archive_free(a);
  nubo_transfer_archive_free(NULL);
  CHECK(nubo_transfer_archive_open("/nonexistent", &a) == NUBO_ERR_NOT_FOUND && a == NULL);

  /* Verify and unpack. */
  summary.struct_size = sizeof summary;
  CHECK(nubo_transfer_verify(archive, &vo, &summary) == NUBO_OK && summary.files == 1);
  uo.sync = 0;
  CHECK(nubo_transfer_unpack(archive, out, &uo, &summary) == NUBO_OK &&
        summary.bytes == strlen(data));
  snprintf(cmd, sizeof cmd, "cmp -s '%s/src/hello.txt' '%s/hello.txt'", out, src);
  CHECK(system(cmd) == 0);
  CHECK(nubo_transfer_unpack(archive, NULL, NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);

  /* Encrypted: a key made once, the archive readable with it only. */
  snprintf(key, sizeof key, "%s/k.key", argv[1]);
  snprintf(sealed, sizeof sealed, "%s/sealed.nubo", argv[1]);
  CHECK(nubo_transfer_keygen(key) == NUBO_OK);
  CHECK(nubo_transfer_keygen(key) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_transfer_keygen(NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_transfer_pack_options_init(&po, sizeof po) == NUBO_OK && po.key_file == NULL);
  po.key_file = key;
  po.sync = 0;
  CHECK(nubo_transfer_pack(sources, 1, sealed, &po, NULL) == NUBO_OK);
  CHECK(nubo_transfer_archive_open(sealed, &a) == NUBO_ERR_INVALID_ARGUMENT && a == NULL);
  CHECK(strstr(nubo_last_error(), "is encrypted") != NULL);
  CHECK(nubo_transfer_archive_open_with_key(sealed, key, &a) == NUBO_OK &&
        nubo_transfer_archive_entry_count(a) == 2);
  nubo_transfer_archive_free(a);
  a = NULL;
  CHECK(nubo_transfer_verify(sealed, &vo, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  vo.key_file = key;
  CHECK(nubo_transfer_verify(sealed, &vo, NULL) == NUBO_OK);
  uo.key_file = key;
  snprintf(out, sizeof out, "%s/out-sealed", argv[1]);
  CHECK(nubo_transfer_unpack(sealed, out, &uo, NULL) == NUBO_OK);

  /* A damaged archive is NUBO_ERR_CORRUPT. */
  f = fopen(archive, "r+b");
  fseek(f, 70, SEEK_SET);
  fputc('!', f);
  fclose(f);
  CHECK(nubo_transfer_verify(archive, NULL, NULL) == NUBO_ERR_CORRUPT);

  if (failures == 0) printf("c_transfer_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
