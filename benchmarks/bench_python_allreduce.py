"""all_reduce of a 64 MiB NumPy array across 2 host workers from Python, against the same
collective on a nubo buffer from C++ (bench_allreduce one), interleaved round by round.

Before DLPack the Python path copied through lists; now the array is reduced in place, so the
binding costs only the wrapping of each call. Writes benchmarks/results/python_allreduce.md.

    benchmarks/bench_python_allreduce.sh [BUILD_DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

import nubo

BYTES = 64 << 20
WORKERS = 2
ITERATIONS = 10
ROUNDS = 7


def python_round(team: nubo.Team, arrays: list[np.ndarray], buffers: bool) -> float:
    """Seconds per all_reduce on rank 0, over ITERATIONS calls after a barrier."""
    result: list[float] = []
    lock = threading.Lock()

    def step(w: nubo.Worker) -> None:
        target = w.buffer("f32", BYTES // 4) if buffers else arrays[w.rank]
        w.all_reduce(target)  # warm-up: first touch of the pages
        w.barrier()
        t0 = time.perf_counter()
        for _ in range(ITERATIONS):
            w.all_reduce(target)
        elapsed = (time.perf_counter() - t0) / ITERATIONS
        if w.rank == 0:
            with lock:
                result.append(elapsed)
        if buffers:
            target.close()

    team.run(step)
    return result[0]


def cpp_round(bench: str) -> float:
    out = subprocess.run([bench, "one", "--workers", str(WORKERS), "--bytes", str(BYTES),
                          "--iterations", str(ITERATIONS)], check=True, capture_output=True,
                         text=True).stdout
    return float(out.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True, help="the bench_allreduce program")
    parser.add_argument("--out", required=True)
    parser.add_argument("--command", default="benchmarks/bench_python_allreduce.sh")
    args = parser.parse_args()

    arrays = [np.ones(BYTES // 4, dtype=np.float32) for _ in range(WORKERS)]
    py, py_buf, cpp = [], [], []
    with nubo.Team.host(WORKERS) as team:
        for r in range(ROUNDS):
            # ABBA-style: the order alternates so that drift hits every side alike.
            order = [("numpy", py), ("buffer", py_buf), ("cpp", cpp)]
            for name, sink in (order if r % 2 == 0 else list(reversed(order))):
                if name == "cpp":
                    sink.append(cpp_round(args.bench))
                else:
                    sink.append(python_round(team, arrays, name == "buffer"))
            print(f"round {r + 1}: numpy {py[-1] * 1e3:.2f} ms, nubo Buffer from Python "
                  f"{py_buf[-1] * 1e3:.2f} ms, C++ {cpp[-1] * 1e3:.2f} ms", file=sys.stderr)
    m_py, m_buf, m_cpp = (statistics.median(v) for v in (py, py_buf, cpp))
    gbs = lambda s: BYTES / s / 1e9  # noqa: E731
    table = (
        "| path | median ms per all_reduce | algbw GB/s | C++ time / this time |\n"
        "|---|---:|---:|---:|\n"
        f"| C++: Worker::all_reduce on a nubo Buffer | {m_cpp * 1e3:.2f} | {gbs(m_cpp):.2f} | 1.00 |\n"
        f"| Python: Worker.all_reduce(numpy array), in place | {m_py * 1e3:.2f} | {gbs(m_py):.2f} "
        f"| {m_cpp / m_py:.2f} |\n"
        f"| Python: Worker.all_reduce(nubo Buffer) | {m_buf * 1e3:.2f} | {gbs(m_buf):.2f} "
        f"| {m_cpp / m_buf:.2f} |\n")
    text = (
        "# all_reduce from Python: a NumPy array in place vs a nubo buffer from C++\n\n"
        f"Command: `{args.command}`\n\n"
        f"Machine: {os.cpu_count()} cores. {BYTES >> 20} MiB of f32, sum, {WORKERS} host workers "
        f"in one process (shared memory). Each value is the median of {ROUNDS} rounds of "
        f"{ITERATIONS} calls, the three paths interleaved round by round (the C++ side is "
        "`bench_allreduce one`, a process of its own). Before DLPack the Python path copied the "
        "data through Python lists; the array is now reduced where it lies.\n\n" + table)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
