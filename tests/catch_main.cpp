// The Catch2 runner of every test program. Catch2 v2 has no skip of its own: a test that calls
// NUBO_SKIP (support/skip.hpp) and fails nothing makes the program exit 77, which CTest counts
// as skipped; a genuine result of 77 (77 failed assertions) is reported as 1, so that it is
// never mistaken for a skip.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/skip.hpp"

namespace {
bool skipped = false;
}  // namespace

namespace nubo::test {
void note_skipped() {
  skipped = true;
}
}  // namespace nubo::test

int main(int argc, char** argv) {
  const int result = Catch::Session().run(argc, argv);
  if (result == 0 && skipped) return 77;
  return result == 77 ? 1 : result;
}
