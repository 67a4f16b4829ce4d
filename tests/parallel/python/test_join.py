"""nubo.init(): a process joins its job with one call and uses its worker from its own threads,
the main thread included, with no callback; nubo.shutdown() and interpreter exit leave the job.
Run by ctest with PYTHONPATH=capi/python, NUBO_LIBRARY the build's libnubo_c.so and NUBO_RUN
the nubo-run program."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import unittest

import nubo


def run_job(script: str, processes: int = 2, timeout: float = 120,
            env: dict | None = None) -> subprocess.CompletedProcess:
    runner = os.environ.get("NUBO_RUN")
    if not runner:
        raise unittest.SkipTest("NUBO_RUN is not set")
    return subprocess.run([runner, "--nproc", str(processes), "--", sys.executable, "-c",
                           textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, **(env or {})))


class InitTest(unittest.TestCase):
    def test_collectives_from_the_main_thread_with_a_signal_handler_and_no_shutdown(self) -> None:
        done = run_job("""
            import os, signal, threading
            import nubo
            w = nubo.init(timeout=30)
            caught = []
            signal.signal(signal.SIGUSR1, lambda *_: caught.append(True))  # main thread only
            os.kill(os.getpid(), signal.SIGUSR1)
            b = w.buffer("f32", 1000)
            b.write([float(w.rank + 1)] * 1000)
            w.all_reduce(b, "sum")
            t = threading.Thread(target=lambda: w.all_reduce(b, "max"))  # and from another
            t.start(); t.join()
            assert nubo.init() is w, "init() twice gives the same worker"
            print("rank", w.rank, "of", w.size, "sum", b.read(0, 1)[0], "signal", bool(caught),
                  flush=True)
            # no nubo.shutdown(): interpreter exit leaves the job
        """)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        for rank in (0, 1):
            self.assertIn(f"[{rank}] rank {rank} of 2 sum 3.0 signal True", done.stdout)
        self.assertNotIn("Traceback", done.stdout + done.stderr)

    def test_shutdown_closes_the_worker_and_init_joins_again(self) -> None:
        w = nubo.init()
        self.assertTrue(nubo.is_initialized())
        self.assertIs(nubo.worker(), w)
        b = w.buffer("i32", 2)
        b.write([3, 4])
        w.all_reduce(b)  # a job of this process alone
        self.assertEqual(b.read(), [3, 4])
        nubo.shutdown()
        self.assertFalse(nubo.is_initialized())
        with self.assertRaises(nubo.NuboError) as raised:
            w.barrier()
        self.assertIn("team is closed", str(raised.exception))
        with self.assertRaises(nubo.NuboError):
            nubo.worker()
        nubo.shutdown()  # twice: nothing to do
        again = nubo.init()
        self.assertIsNot(again, w)
        again.barrier()
        nubo.shutdown()

    def test_exit_without_shutdown_does_not_wait_for_a_dead_peer_forever(self) -> None:
        started = time.monotonic()
        done = run_job("""
            import os, nubo
            w = nubo.init(timeout=5)
            w.barrier()
            if w.rank == 1:
                os._exit(0)  # gone without leaving
            print("rank 0 leaves", flush=True)
        """)
        self.assertIn("rank 0 leaves", done.stdout)
        self.assertLess(time.monotonic() - started, 60, done.stdout + done.stderr)


if __name__ == "__main__":
    unittest.main()
