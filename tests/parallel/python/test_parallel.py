"""nubo.Team, Worker, Buffer and the collectives from Python, over libnubo_c.so.

Run by ctest (tests/parallel/CMakeLists.txt) with PYTHONPATH=capi/python, NUBO_LIBRARY naming
the build's libnubo_c.so and NUBO_RUN the nubo-run program. (The structs' layout is checked
for every capability by bindings:python.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import unittest

import nubo


def setUpModule() -> None:
    for name in ("NUBO_RANK", "NUBO_LOCAL_RANK", "NUBO_WORLD_SIZE", "NUBO_RENDEZVOUS",
                 "NUBO_SIM_DEVICES", "NUBO_TIMEOUT"):
        os.environ.pop(name, None)


class CollectivesTest(unittest.TestCase):
    def test_every_collective_on_three_host_workers(self) -> None:
        results: dict[int, dict[str, list[float]]] = {}
        lock = threading.Lock()

        def step(w: nubo.Worker) -> None:
            out: dict[str, list[float]] = {}
            b = w.buffer("f32", 4)
            b.write([w.rank + 0.5] * 4)
            w.all_reduce(b, "sum")
            out["sum"] = b.read()
            h = w.buffer(nubo.DType.F16, 2)
            h.write([w.rank * 1.5, -w.rank])
            w.all_reduce_async(h, nubo.ReduceOp.MIN).wait()
            out["min"] = h.read()
            i = w.buffer("i64", 3)
            i.write([w.rank * (1 << 40)] * 3)
            w.broadcast(i, root=2)
            out["bcast"] = i.read()
            g = w.buffer("i64", 9)
            w.all_gather(i, g)
            src = w.buffer("i32", 6)
            src.write(list(range(w.rank, w.rank + 6)))
            dst = w.buffer("i32", 2)
            p = w.reduce_scatter_async(src, dst, "max")
            w.barrier_async().wait()
            p.wait()
            out["scatter"] = dst.read()
            a2a_in = w.buffer("i32", 6)
            a2a_in.write([10 * w.rank + j for j in range(6)])
            a2a_out = w.buffer("i32", 6)
            w.all_to_all(a2a_in, a2a_out)
            out["a2a"] = a2a_out.read()
            w.all_to_all_async(a2a_in, a2a_out).wait()
            out["a2a_async"] = a2a_out.read()
            out["shard"] = list(w.shard(10))
            w.barrier()
            with lock:
                results[w.rank] = out

        with nubo.Team.host(3, timeout=30) as team:
            self.assertEqual(team.size, 3)
            team.run(step)
        self.assertEqual(results[0]["sum"], [4.5] * 4)
        self.assertEqual(results[1]["min"], [0.0, -2.0])
        self.assertEqual(results[0]["bcast"], [2 << 40] * 3)
        self.assertEqual(results[1]["scatter"], [4, 5])  # max over ranks of rows 2, 3
        # Rank 1 gets block 1 (elements 2 and 3) of every rank's input, rank j's at block j.
        self.assertEqual(results[1]["a2a"], [2, 3, 12, 13, 22, 23])
        self.assertEqual(results[1]["a2a_async"], results[1]["a2a"])
        self.assertEqual(results[0]["shard"], [0, 1, 2, 3])
        self.assertEqual(results[2]["shard"], [7, 8, 9])

    def test_bf16_rounds_to_nearest_even(self) -> None:
        seen: list[list[float]] = []

        def step(w: nubo.Worker) -> None:
            b = w.buffer("bf16", 2)
            b.write([1.0 + 1.0 / 256, 3.140625])
            seen.append(b.read())

        nubo.Team.host(1).run(step)
        self.assertEqual(seen, [[1.0, 3.140625]])

    def test_simulated_gpus_from_a_report(self) -> None:
        report = nubo.discover(sim_devices="4xA100-SXM4-80GB", probe_cuda=False)
        names: list[str] = []
        team = nubo.Team.from_report(report, [d.index for d in report.select(count=2)])

        def step(w: nubo.Worker) -> None:
            b = w.buffer("f32", 1)
            b.write([1.0])
            w.all_reduce(b)
            names.append(f"{w.backend} {w.device_index} {b.read()[0]}")

        team.run(step)
        self.assertEqual(sorted(names), ["sim 0 2.0", "sim 1 2.0"])
        team.close()


class CoresTest(unittest.TestCase):
    def test_host_workers_share_the_cores_and_bind_when_asked(self) -> None:
        with nubo.Team.host(2, cpu_bind=True) as team:
            text = team.describe()
            self.assertIn("rank 1: ", text)
            self.assertIn("GEMM thread", text)
            self.assertIn("pinned to CPUs", text)
            seen: dict[int, tuple[int, list[int]]] = {}

            def look(w: nubo.Worker) -> None:
                seen[w.rank] = (w.host_threads, w.cpus)

            team.run(look)
        for rank in (0, 1):
            threads, cpus = seen[rank]
            self.assertGreaterEqual(threads, 1)
            self.assertTrue(cpus)
        with nubo.Team.host(1) as team:
            team.run(lambda w: self.assertEqual(w.cpus, []))


class FailureTest(unittest.TestCase):
    def test_any_team_option_is_taken_by_name_and_a_misspelt_one_is_refused(self) -> None:
        with nubo.Team.host(2, gemm_threads=6, timeout=30) as team:
            # Each worker's share: 3, or the process's own OpenBLAS under the sanitizers.
            self.assertTrue(all(team.worker(i).host_threads >= 1 for i in range(2)))
        with self.assertRaisesRegex(TypeError, "gemm_thread"):
            nubo.Team.host(2, gemm_thread=6)
        with self.assertRaisesRegex(nubo.NuboError, "gemm_threads must be between 0"):
            nubo.Team.host(2, gemm_threads=5000)

    def test_an_exception_in_one_worker_is_re_raised_and_stops_the_others(self) -> None:
        cancelled: list[nubo.Status] = []

        def step(w: nubo.Worker) -> None:
            if w.rank == 1:
                raise KeyError("missing shard")
            b = w.buffer("f32", 8)
            try:
                w.all_reduce(b)
            except nubo.NuboError as e:
                cancelled.append(e.status)
                raise

        team = nubo.Team.host(3, timeout=60)
        with self.assertRaises(KeyError) as caught:
            team.run(step)
        self.assertIn("rank 1: KeyError", str(caught.exception.__cause__))
        self.assertEqual(cancelled, [nubo.Status.CANCELLED] * 2)

    def test_a_mismatch_is_a_nubo_error_on_every_rank(self) -> None:
        def step(w: nubo.Worker) -> None:
            w.all_reduce(w.buffer("f32", 3 + w.rank))

        with self.assertRaises(nubo.NuboError) as caught:
            nubo.Team.host(2, timeout=30).run(step)
        self.assertEqual(caught.exception.status, nubo.Status.INVALID_ARGUMENT)
        self.assertIn("differs between the workers", str(caught.exception))

    def test_bad_arguments(self) -> None:
        with self.assertRaises(nubo.NuboError) as caught:
            nubo.Team.host(0)
        self.assertIn("workers is 0", str(caught.exception))

        def step(w: nubo.Worker) -> None:
            with self.assertRaises(nubo.NuboError):
                w.buffer("f64", 1)
            b = w.buffer("f32", 2)
            with self.assertRaises(nubo.NuboError):
                w.all_reduce(b, "median")
            with self.assertRaises(nubo.NuboError) as e:
                b.write([1.0, 2.0, 3.0])
            self.assertIn("outside the buffer", str(e.exception))
            b.close()
            with self.assertRaises(nubo.NuboError):
                b.read()

        nubo.Team.host(1).run(step)


class NuboRunTest(unittest.TestCase):
    def test_a_python_job_under_nubo_run(self) -> None:
        runner = os.environ.get("NUBO_RUN")
        if not runner:
            self.skipTest("NUBO_RUN is not set")
        script = textwrap.dedent("""
            import nubo
            team = nubo.Team.from_env(timeout=30)
            def step(w):
                b = w.buffer("i32", 1)
                b.write([w.rank + 1])
                w.all_reduce(b)
                print("rank", w.rank, "of", w.size, "sum", b.read()[0])
            team.run(step)
            team.close()
        """)
        done = subprocess.run([runner, "--nproc", "3", "--", sys.executable, "-c", script],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("[2] rank 2 of 3 sum 6", done.stdout)


if __name__ == "__main__":
    unittest.main()
