/* nubo_s3_copy through the C ABI, from strict C11: defaults and bad arguments (the transfers
 * themselves are tests/s3/server_test.cpp's and python_s3_test.py's, against a server). */
#include <stdio.h>
#include <string.h>

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
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
