"""The sharded optimizer from Python: NumPy arrays and PyTorch tensors as the flat parameters and
gradients (through DLPack, in place), stages 1 and 3 against the replicated optimizer, bf16 with
fp32 master weights, a checkpoint resumed on another world size, the mixed-precision kernels,
and bad input.

Run by ctest with Debian's python3 (python3-numpy, python3-torch), PYTHONPATH=capi/python and
NUBO_LIBRARY naming the build's libnubo_c.so. PyTorch is optional: its test is skipped without it.
"""

from __future__ import annotations

import os
import tempfile
import threading
import unittest
from typing import Any, Callable

import numpy as np

import nubo

try:
    import torch
except ImportError:
    torch = None


def run_on(workers: int, fn: Callable[[nubo.Worker], Any]) -> dict[int, Any]:
    results: dict[int, Any] = {}
    lock = threading.Lock()

    def step(w: nubo.Worker) -> None:
        value = fn(w)
        with lock:
            results[w.rank] = value

    with nubo.Team.host(workers) as team:
        team.run(step)
    return results


def train(w: nubo.Worker, stage: int, steps: int = 4, load: str = "", save: str = "",
          first: int = 1) -> np.ndarray:
    n = 1000
    padded = nubo.ShardedOptimizer.padded_size(w.size, [n], stage=stage)
    params = np.zeros(padded, dtype=np.float32)
    params[:n] = np.cos(np.arange(n) * 0.11) * 0.5
    grads = np.zeros(padded, dtype=np.float32)
    opt = nubo.ShardedOptimizer(w, params, slices=[n], optimizer="adamw", lr=0.01, stage=stage)
    if load:
        opt.load(load)
    for t in range(first, first + steps):
        grads[:n] = np.round(np.sin(np.arange(n) * 0.37 + t) * 32) / 128
        opt.step(grads)
    if save:
        opt.save(save)
    if stage == 3:
        g = opt.gather(0)
        out = np.from_dlpack(g).copy()
        g.close()
        opt.release(0)
    else:
        out = params[:n].copy()  # written in place through DLPack
    opt.close()
    return out


class ShardedTest(unittest.TestCase):
    def test_stages_match_the_replicated_optimizer(self) -> None:
        replicated = run_on(2, lambda w: train(w, 0))[0]
        for stage in (1, 2, 3):
            with self.subTest(stage=stage):
                got = run_on(2, lambda w, s=stage: train(w, s))
                np.testing.assert_array_equal(got[0], replicated)
                np.testing.assert_array_equal(got[1], replicated)

    def test_checkpoint_resumes_on_another_world_size(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "opt.nubo")
            whole = run_on(2, lambda w: train(w, 1, steps=6))[0]
            run_on(2, lambda w: train(w, 1, steps=3, save=path))
            resumed = run_on(1, lambda w: train(w, 1, steps=3, load=path, first=4))[0]
            np.testing.assert_array_equal(resumed, whole)

    def test_layout_and_memory(self) -> None:
        self.assertEqual(nubo.ShardedOptimizer.padded_size(3, [1000, 10]), 1152 + 384)
        m = nubo.sharded_memory(7.5e9, 3, "adam", "f16", 64)
        self.assertAlmostEqual(m.total / 1e9, 1.875, places=3)

    def test_bad_input_is_named(self) -> None:
        def bad(w: nubo.Worker) -> None:
            params = np.zeros(100, dtype=np.float32)
            with self.assertRaisesRegex(nubo.NuboError, "params hold 100 elements"):
                nubo.ShardedOptimizer(w, params, stage=1)
            padded = nubo.ShardedOptimizer.padded_size(1, [100])
            params = np.zeros(padded, dtype=np.float32)
            with self.assertRaisesRegex(TypeError, "no option 'learning_rate'"):
                nubo.ShardedOptimizer(w, params, learning_rate=0.1)
            with self.assertRaisesRegex(nubo.NuboError, "optimizer 'lamb'"):
                nubo.ShardedOptimizer(w, params, optimizer="lamb")
            opt = nubo.ShardedOptimizer(w, params, stage=1)
            with self.assertRaisesRegex(nubo.NuboError, "the gradients hold 10 elements"):
                opt.step(np.zeros(10, dtype=np.float32))
            with self.assertRaisesRegex(nubo.NuboError, "only stage 3 gathers"):
                opt.gather(0)
            opt.close()
        run_on(1, bad)

    def test_mixed_precision_kernels(self) -> None:
        def kernels(w: nubo.Worker) -> None:
            g = np.array([2.0, 4.0], dtype=np.float32)
            stats = np.zeros(2, dtype=np.float32)
            w.unscale_check(g, 0.5, stats)
            np.testing.assert_array_equal(g, [1.0, 2.0])
            np.testing.assert_array_equal(stats, [0.0, 5.0])
            master = np.ones(2, dtype=np.float32)
            m = np.zeros(2, dtype=np.float32)
            half = np.zeros(2, dtype=np.float16)
            w.optimizer_step(master, g, m, params=half, kind="sgd", lr=0.5, momentum=0)
            np.testing.assert_array_equal(master, [0.5, 0.0])
            np.testing.assert_array_equal(half, [0.5, 0.0])
            w.cast(master, half)
        run_on(1, kernels)

    @unittest.skipIf(torch is None, "PyTorch is not installed (Debian python3-torch)")
    def test_bf16_torch_tensors_with_fp32_master(self) -> None:
        def step(w: nubo.Worker) -> float:
            n = 512
            padded = nubo.ShardedOptimizer.padded_size(w.size, [n], precision="bf16")
            flat = torch.full((padded,), 0.5, dtype=torch.bfloat16)
            grads = torch.full((padded,), 0.25, dtype=torch.bfloat16)
            opt = nubo.ShardedOptimizer(w, flat, precision="bf16", lr=0.01, stage=2)
            for _ in range(3):
                opt.step(grads)
            opt.close()
            return float(flat[0])
        got = run_on(2, step)
        self.assertAlmostEqual(got[0], 0.47, delta=0.004)
        self.assertEqual(got[0], got[1])


if __name__ == "__main__":
    unittest.main()
