"""Data-parallel gradient descent from Python: each worker computes the gradient of its shard of
a batch with NumPy (and again with PyTorch, when it is importable), and nubo sums the gradients
across the workers in place, in the arrays' own memory: no copy, no buffer of nubo's.

    NUBO_LIBRARY=build/lib/libnubo_c.so PYTHONPATH=capi/python python3 examples/python/data_parallel.py
"""

from __future__ import annotations

import sys
import threading

import numpy as np

import nubo

FEATURES, ROWS, STEPS, LR = 8, 4096, 30, 0.1
TRUE_W = np.arange(1, FEATURES + 1, dtype=np.float32) * 0.25


def batch() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((ROWS, FEATURES), dtype=np.float32)
    return x, x @ TRUE_W + 0.01 * rng.standard_normal(ROWS, dtype=np.float32)


def train(lib: str, workers: int) -> list[np.ndarray]:
    """Fits the linear model on `workers` CPU workers with NumPy or PyTorch arrays."""
    x_all, y_all = batch()
    final: list = [None] * workers
    lock = threading.Lock()

    def step(w: nubo.Worker) -> None:
        rows = w.shard(ROWS)
        if lib == "torch":
            import torch
            x = torch.from_numpy(x_all[rows.start:rows.stop])
            y = torch.from_numpy(y_all[rows.start:rows.stop])
            weights = torch.zeros(FEATURES)
            grad = torch.zeros(FEATURES + 1)  # the gradient, and the squared error
        else:
            x, y = x_all[rows.start:rows.stop], y_all[rows.start:rows.stop]
            weights = np.zeros(FEATURES, dtype=np.float32)
            grad = np.zeros(FEATURES + 1, dtype=np.float32)
        for i in range(1, STEPS + 1):
            err = x @ weights - y
            grad[:FEATURES] = 2.0 * (x.T @ err) / ROWS  # this shard's share of the mean
            grad[FEATURES] = (err @ err) / ROWS
            w.all_reduce(grad, "sum")  # in place: grad now holds the whole batch's gradient
            weights -= LR * grad[:FEATURES]
            if w.rank == 0 and (i == 1 or i % 10 == 0):
                with lock:
                    print(f"  {lib} step {i:2d}: mean squared error {float(grad[FEATURES]):.5f}")
        assert w.bytes_in_use == 0, "nubo allocated memory for an array it should use in place"
        with lock:
            final[w.rank] = np.asarray(weights)

    with nubo.Team.host(workers) as team:
        team.run(step)
    return final


def main() -> int:
    libraries = ["numpy"]
    try:
        import torch  # noqa: F401
        libraries.append("torch")
    except ImportError:
        print("(PyTorch is not importable: only the NumPy run)")
    for lib in libraries:
        print(f"{lib}: 2 CPU workers, {ROWS} rows, gradients all-reduced in place")
        weights = train(lib, 2)
        same = all(np.array_equal(w, weights[0]) for w in weights)
        distance = float(np.linalg.norm(weights[0] - TRUE_W))
        print(f"  weights {'identical' if same else 'DIFFERENT'} on every worker; "
              f"distance to the true weights {distance:.4f}")
        if not same or distance > 0.05:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
