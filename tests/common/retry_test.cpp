// One retry policy for every retry in nubo: how many tries, and the waits between them.
#include <catch2/catch.hpp>

#include "nubo/retry.hpp"

TEST_CASE("a retry policy counts the tries and doubles its waits up to the cap") {
  std::mt19937_64 rng(1);
  const nubo::RetryPolicy once{2};
  CHECK(once.again(1));
  CHECK_FALSE(once.again(2));
  CHECK(once.delay_s(1, rng) == 0);  // at once
  const nubo::RetryPolicy steady{7, 0.1, 20, false};
  CHECK(steady.delay_s(1, rng) == Approx(0.1));
  CHECK(steady.delay_s(2, rng) == Approx(0.2));
  CHECK(steady.delay_s(5, rng) == Approx(1.6));
  CHECK(steady.delay_s(40, rng) == Approx(20));  // capped, and no overflow however many
  CHECK(steady.again(6));
  CHECK_FALSE(steady.again(7));
  const nubo::RetryPolicy spread{7, 0.1, 20, true};
  for (int failed = 1; failed <= 12; ++failed) {
    const double full = steady.delay_s(failed, rng), drawn = spread.delay_s(failed, rng);
    CHECK(drawn >= full / 2);  // the upper half of the wait
    CHECK(drawn <= full);
  }
}

TEST_CASE("nubo-run's restart waits: 1 s doubling to 30 s, the same on every node") {
  const nubo::RetryPolicy restarts{4, 1.0, 30.0, false};
  const double expected[] = {1, 2, 4, 8, 16, 30, 30};
  for (int failed = 1; failed <= 7; ++failed)
    CHECK(restarts.base_delay_s(failed) == expected[failed - 1]);
  CHECK(restarts.again(3));  // attempts 1 to 3 failed: the 4th runs
  CHECK_FALSE(restarts.again(4));
}
