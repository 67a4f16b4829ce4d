/* Checks shared by the C11 tests of teams and workers: EXPECT on the main thread (counting
   failures), and, in a worker's callback, where a failure must travel as the run's status
   through nubo_worker_fail: CHECK_IN_WORKER, CALL_IN_WORKER and REFUSED_IN_WORKER. */
#ifndef NUBO_TESTS_C_CHECKS_H
#define NUBO_TESTS_C_CHECKS_H

#include <stdio.h>
#include <string.h>

#include "nubo.h"

static int failures = 0;

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

#define CHECK_IN_WORKER(w, cond)                                                          \
  do {                                                                                    \
    if (!(cond)) return nubo_worker_fail((w), NUBO_ERR_INTERNAL, "check failed: " #cond); \
  } while (0)

#define CALL_IN_WORKER(call)      \
  do {                            \
    nubo_status s_ = (call);      \
    if (s_ != NUBO_OK) return s_; \
  } while (0)

/* A call that must fail with invalid_argument and a message holding `text`. */
#define REFUSED_IN_WORKER(w, call, text) \
  CHECK_IN_WORKER(                       \
      w, (call) == NUBO_ERR_INVALID_ARGUMENT && strstr(nubo_last_error(), (text)) != NULL)

#endif /* NUBO_TESTS_C_CHECKS_H */
