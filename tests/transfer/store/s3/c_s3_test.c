/* nubo_transfer_copy and its S3-named alias nubo_s3_copy through the C ABI, from strict C11:
 * defaults, bad arguments, the S3 extension struct, and a file:// round trip (the transfers to
 * a bucket are tests/transfer/store/s3/server_test.cpp's and python_s3_test.py's, against a
 * server). */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nubo.h"

static int failures = 0;

/* A sync's change callback: counts the changes and keeps the last. */
struct changes {
  int count;
  char last[128];
};
static void on_change(const char* change, void* user) {
  struct changes* c = user;
  ++c->count;
  snprintf(c->last, sizeof c->last, "%s", change);
}
#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, #cond, \
              nubo_last_error());                                                              \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

int main(void) {
  nubo_s3_copy_options o;
  nubo_s3_copy_summary s;
  CHECK(nubo_s3_copy_options_init(&o, sizeof o) == NUBO_OK);
  CHECK(o.streams == 4 && o.sync == 1 && o.part_size == 0 && o.keep_partial == 0);
  CHECK(nubo_s3_copy_options_init(NULL, sizeof o) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_s3_copy(NULL, "s3://bucket/k", NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "from") != NULL);
  CHECK(nubo_s3_copy("a", "b", NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "s3://") != NULL);
  o.streams = 0;
  CHECK(nubo_s3_copy("a", "s3://bucket/k", &o, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "streams") != NULL);
  s.struct_size = 0;
  CHECK(nubo_s3_copy("a", "s3://bucket/k", NULL, &s) == NUBO_ERR_INVALID_ARGUMENT);

  /* The store-neutral copy. */
  nubo_transfer_copy_options c;
  nubo_transfer_s3_options s3;
  nubo_transfer_copy_summary cs;
  CHECK(nubo_transfer_copy_options_init(&c, sizeof c) == NUBO_OK);
  CHECK(c.streams == 4 && c.sync == 1 && c.s3 == NULL && c.journal_dir == NULL);
  CHECK(nubo_transfer_s3_options_init(&s3, sizeof s3) == NUBO_OK);
  CHECK(s3.profile == NULL && s3.server_side_encryption == NULL && s3.source_profile == NULL);
  CHECK(nubo_transfer_is_store_url("gs://b/k") == 1);
  CHECK(nubo_transfer_is_store_url("file:///tmp/x") == 1);
  CHECK(nubo_transfer_is_store_url("/tmp/x") == 0);
  CHECK(nubo_transfer_is_store_url(NULL) == 0);

  /* Sync: its options' defaults, and two local directories refused. */
  {
    nubo_transfer_sync_options so;
    nubo_transfer_sync_summary ss;
    CHECK(nubo_transfer_sync_options_init(&so, sizeof so) == NUBO_OK);
    CHECK(so.copy == NULL && so.delete_extra == 0 && so.dry_run == 0);
    ss.struct_size = sizeof ss;
    CHECK(nubo_transfer_sync("/tmp/a", "/tmp/b", &so, &ss) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(strstr(nubo_last_error(), "rsync") != NULL);
  }

  /* The IAM policy of some operations: asked for its size, then written. */
  {
    const char* places[] = {"s3://bucket/run1/"};
    const char* ops[] = {"unpack", "cp"};
    const char* bad_ops[] = {"rm"};
    size_t needed = 0;
    char policy[4096];
    CHECK(nubo_transfer_access_policy(places, 1, ops, 2, NULL, 0, &needed) ==
          NUBO_ERR_INVALID_ARGUMENT);
    CHECK(needed > 0 && needed < sizeof policy);
    CHECK(nubo_transfer_access_policy(places, 1, ops, 2, policy, sizeof policy, &needed) ==
          NUBO_OK);
    CHECK(strstr(policy, "\"arn:aws:s3:::bucket/run1/*\"") != NULL);
    CHECK(strstr(policy, "s3:ListBucket") != NULL && strstr(policy, "s3:DeleteObject") == NULL);
    CHECK(nubo_transfer_access_policy(places, 1, bad_ops, 1, policy, sizeof policy, &needed) ==
          NUBO_ERR_INVALID_ARGUMENT);
    CHECK(strstr(nubo_last_error(), "unknown operation 'rm'") != NULL);
    CHECK(nubo_transfer_access_policy(NULL, 1, ops, 2, policy, sizeof policy, &needed) ==
          NUBO_ERR_INVALID_ARGUMENT);
  }
  CHECK(nubo_transfer_copy("a", "b", NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "s3://, gs://, file://") != NULL);
  s3.server_side_encryption = "rot13";
  c.s3 = &s3;
  CHECK(nubo_transfer_copy("a", "s3://bucket/k", &c, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "rot13") != NULL);
  s3.struct_size = 2; /* not from nubo_transfer_s3_options_init */
  CHECK(nubo_transfer_copy("a", "s3://bucket/k", &c, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "options->s3") != NULL);
  c.s3 = NULL;

  char dir[] = "/tmp/nubo-c-copy-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char src[96], url[128], back[96], command[160];
  snprintf(src, sizeof src, "%s/a.txt", dir);
  snprintf(url, sizeof url, "file://%s/store/a.txt", dir);
  snprintf(back, sizeof back, "%s/back.txt", dir);
  FILE* f = fopen(src, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("through a store\n", f);
    fclose(f);
  }
  c.sync = 0;
  cs.struct_size = sizeof cs;
  CHECK(nubo_transfer_copy(src, url, &c, &cs) == NUBO_OK);
  CHECK(cs.files == 1 && cs.bytes == 16);
  CHECK(nubo_transfer_copy(url, back, &c, &cs) == NUBO_OK);
  char line[64] = {0};
  f = fopen(back, "r");
  CHECK(f != NULL);
  if (f) {
    CHECK(fgets(line, sizeof line, f) != NULL);
    fclose(f);
  }
  CHECK(strcmp(line, "through a store\n") == 0);

  /* A dry-run sync of the tree to a file:// prefix: the callback hears what it would copy. */
  {
    char tree[96], mirror[128], copy_command[400];
    snprintf(tree, sizeof tree, "%s/tree", dir);
    snprintf(mirror, sizeof mirror, "file://%s/mirror/", dir);
    snprintf(copy_command, sizeof copy_command, "mkdir -p '%s' && cp '%s' '%s/'", tree, src, tree);
    CHECK(system(copy_command) == 0);
    nubo_transfer_sync_options so;
    nubo_transfer_sync_summary ss;
    CHECK(nubo_transfer_sync_options_init(&so, sizeof so) == NUBO_OK);
    CHECK(so.change == NULL && so.change_user == NULL);
    struct changes heard = {0, ""};
    so.dry_run = 1;
    so.change = on_change;
    so.change_user = &heard;
    ss.struct_size = sizeof ss;
    CHECK(nubo_transfer_sync(tree, mirror, &so, &ss) == NUBO_OK);
    CHECK(ss.copied == 1 && heard.count == 1 && strcmp(heard.last, "copy a.txt") == 0);
  }
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  CHECK(system(command) == 0);

  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
