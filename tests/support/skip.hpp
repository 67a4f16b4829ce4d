// NUBO_SKIP(why): ends the running TEST_CASE because something it needs is missing (a GPU,
// Gloo, redis-server, a dataset), and makes the test program exit 77, which CTest reports as
// *skipped* (every Catch2 test is registered with SKIP_RETURN_CODE 77): a test that could not
// run never reads as passed. Each CTest entry runs one TEST_CASE, so one skip marks one test.
#pragma once

#include <catch2/catch.hpp>

namespace nubo::test {
// Records that the running test was skipped; tests/catch_main.cpp turns it into exit 77.
void note_skipped();
}  // namespace nubo::test

#define NUBO_SKIP(why)            \
  do {                            \
    WARN("skipped: " << why);     \
    ::nubo::test::note_skipped(); \
    return;                       \
  } while (0)
