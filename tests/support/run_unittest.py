"""Runs unittest modules (named on the command line, from the working directory) and exits as
CTest expects: 0 when every test passed, 1 when one failed, 77 when none failed but some were
skipped (a missing dependency), which CTest reports as skipped with SKIP_RETURN_CODE 77 rather
than as passed.

    python3 run_unittest.py test_parallel test_compute
"""

import sys
import unittest


def main() -> int:
    sys.path.insert(0, ".")
    suite = unittest.defaultTestLoader.loadTestsFromNames(sys.argv[1:])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        print("skipped: " + "; ".join(f"{t.id()}: {why}" for t, why in result.skipped))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
