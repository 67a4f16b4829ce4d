"""Worker compute and zero-copy buffers from Python: NumPy arrays and PyTorch tensors reduced
and multiplied in place through DLPack, nubo buffers read by NumPy and PyTorch without a copy,
native handles and events, and the clear error each bad argument gets.

Run by ctest with Debian's python3 (which has python3-numpy and python3-torch), PYTHONPATH=
capi/python and NUBO_LIBRARY naming the build's libnubo_c.so. PyTorch is optional: its tests
are skipped where it cannot be imported.
"""

from __future__ import annotations

import gc
import threading
import unittest
from typing import Any, Callable

import numpy as np

import nubo

try:
    import torch
except ImportError:  # the PyTorch tests say so and skip
    torch = None


def run_on(workers: int, fn: Callable[[nubo.Worker], Any]) -> dict[int, Any]:
    """fn(worker) on `workers` host workers; their results by rank."""
    results: dict[int, Any] = {}
    lock = threading.Lock()

    def step(w: nubo.Worker) -> None:
        value = fn(w)
        with lock:
            results[w.rank] = value

    with nubo.Team.host(workers) as team:
        team.run(step)
    return results


class NumpyInPlaceTest(unittest.TestCase):
    def test_all_reduce_of_numpy_arrays_is_in_place_and_allocates_nothing(self) -> None:
        arrays = [np.arange(100_000, dtype=np.float32) * (r + 1) for r in range(2)]
        addresses = [a.ctypes.data for a in arrays]

        def step(w: nubo.Worker) -> int:
            before = w.bytes_in_use
            w.all_reduce(arrays[w.rank], "sum")
            return w.bytes_in_use - before

        grown = run_on(2, step)
        self.assertEqual(grown, {0: 0, 1: 0})  # no buffer the size of the array, or any
        for a, address in zip(arrays, addresses):
            self.assertEqual(a.ctypes.data, address)
            np.testing.assert_array_equal(a, np.arange(100_000, dtype=np.float32) * 3)

    def test_every_collective_takes_numpy_arrays(self) -> None:
        gathered = [np.zeros(6, dtype=np.int64) for _ in range(2)]
        scattered = [np.zeros(2, dtype=np.float32) for _ in range(2)]
        bcast = [np.full(3, r, dtype=np.int32) for r in range(2)]

        def step(w: nubo.Worker) -> None:
            w.all_gather(np.full(3, w.rank + 1, dtype=np.int64), gathered[w.rank])
            w.reduce_scatter(np.arange(4, dtype=np.float32), scattered[w.rank], "max")
            w.broadcast(bcast[w.rank], root=1)
            p = w.all_reduce_async(bcast[w.rank], "sum")
            p.wait()

        run_on(2, step)
        for r in range(2):
            np.testing.assert_array_equal(gathered[r], [1, 1, 1, 2, 2, 2])
            np.testing.assert_array_equal(scattered[r], [2 * r, 2 * r + 1])
            np.testing.assert_array_equal(bcast[r], [2, 2, 2])

    def test_half_arrays(self) -> None:
        halves = [np.full(8, 0.5 * (r + 1), dtype=np.float16) for r in range(3)]
        run_on(3, lambda w: w.all_reduce(halves[w.rank], "avg"))
        for h in halves:
            np.testing.assert_array_equal(h, np.full(8, 1.0, dtype=np.float16))

    def test_gemm_on_numpy_arrays_takes_its_shape_from_them(self) -> None:
        rng = np.random.default_rng(5)
        a = rng.standard_normal((7, 5), dtype=np.float32)
        b = rng.standard_normal((5, 3), dtype=np.float32)
        at = np.ascontiguousarray(a.T)
        out = [np.zeros((7, 3), dtype=np.float32) for _ in range(2)]

        def step(w: nubo.Worker) -> None:
            w.gemm(a, b, out[0])
            w.gemm(at, b, out[1], trans_a=True, alpha=2.0)

        run_on(1, step)
        np.testing.assert_allclose(out[0], a @ b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out[1], 2 * (a @ b), rtol=1e-5, atol=1e-5)

    def test_fill_scale_axpy_on_arrays(self) -> None:
        x = np.ones(5, dtype=np.float32)
        y = np.zeros(5, dtype=np.float32)

        def step(w: nubo.Worker) -> None:
            w.fill(y, 2.0)
            w.scale(x, 3.0)
            w.axpy(0.5, x, y)

        run_on(1, step)
        np.testing.assert_array_equal(y, np.full(5, 3.5, dtype=np.float32))

    def test_a_wrapped_array_stays_alive_while_the_buffer_lives(self) -> None:
        def step(w: nubo.Worker) -> list[float]:
            buf = w.wrap(np.full(4, 7.0, dtype=np.float32))  # nothing else holds the array
            gc.collect()
            w.scale(buf, 2.0)
            values = buf.read()
            buf.close()
            return values

        self.assertEqual(run_on(1, step)[0], [14.0] * 4)


class BufferExportTest(unittest.TestCase):
    def test_numpy_reads_a_buffer_without_a_copy(self) -> None:
        def step(w: nubo.Worker) -> None:
            b = w.buffer("f32", 4)
            b.write([1, 2, 3, 4])
            self.assertEqual(b.__dlpack_device__(), (1, 0))
            view = np.from_dlpack(b)
            self.assertEqual(view.ctypes.data, b.data_ptr)
            b.write([9], 0)
            self.assertEqual(view.tolist(), [9.0, 2.0, 3.0, 4.0])
            b.close()  # the view still holds the memory
            self.assertEqual(view.tolist(), [9.0, 2.0, 3.0, 4.0])
            s = w.buffer("i32", 10)
            w.fill(s, 3)
            part = s.slice(8, 2)
            self.assertEqual(np.from_dlpack(part).tolist(), [3, 3])

        run_on(1, step)


class BadInputTest(unittest.TestCase):
    def assert_refused(self, call: Callable[[], Any], says: str) -> None:
        with self.assertRaises(nubo.NuboError) as raised:
            call()
        self.assertEqual(raised.exception.status, nubo.Status.INVALID_ARGUMENT)
        self.assertIn(says, str(raised.exception))

    def test_each_bad_operand_gets_a_clear_error_and_nothing_changes(self) -> None:
        read_only = np.ones(4, dtype=np.float32)
        read_only.setflags(write=False)
        strided = np.ones((4, 4), dtype=np.float32)
        kept = strided.copy()

        def step(w: nubo.Worker) -> None:
            self.assert_refused(lambda: w.all_reduce(read_only), "read-only")
            self.assert_refused(lambda: w.all_reduce(strided[:, 1]), "not compact row-major")
            self.assert_refused(lambda: w.all_reduce(np.ones(3)), "dtype float64")
            self.assert_refused(lambda: w.all_reduce(np.ones(3, dtype=np.uint8)), "dtype uint8")
            self.assert_refused(lambda: w.all_reduce([1.0, 2.0]), "neither a nubo Buffer")
            self.assert_refused(lambda: w.gemm(w.buffer("f32", 6), w.buffer("f32", 6),
                                               w.buffer("f32", 4)), "pass m, n and k")
            self.assert_refused(lambda: w.gemm(np.ones((2, 3), np.float32),
                                               np.ones((3, 2), np.float32),
                                               np.ones((2, 2), np.int32)), "must be one type")
            self.assert_refused(lambda: w.fill(np.ones(2, np.int32), 0.5), "not a whole number")
            self.assert_refused(lambda: w.use_stream(1234), "without streams")
            self.assert_refused(lambda: w.use_stream("stream"), "is not a stream")
            self.assert_refused(lambda: w.buffer("f32", 4).slice(3, 2), "outside the buffer")

        run_on(1, step)
        np.testing.assert_array_equal(read_only, np.ones(4, dtype=np.float32))
        np.testing.assert_array_equal(strided, kept)


class StreamsTest(unittest.TestCase):
    def test_host_workers_have_no_native_handles_and_events_are_done(self) -> None:
        def step(w: nubo.Worker) -> None:
            h = w.native()
            self.assertEqual(h, nubo.NativeHandles(None, None, None, -1))
            w.use_stream(None)
            w.use_own_stream()
            e = w.record_event()
            self.assertTrue(e.done)
            e.synchronize()
            self.assertIsNone(e.native)
            w.wait_event(e)
            w.synchronize()

        run_on(1, step)


@unittest.skipIf(torch is None, "PyTorch is not importable")
class TorchTest(unittest.TestCase):
    def test_torch_tensors_reduce_in_place(self) -> None:
        tensors = [torch.full((3, 4), float(r + 1)) for r in range(2)]
        pointers = [t.data_ptr() for t in tensors]
        run_on(2, lambda w: w.all_reduce(tensors[w.rank], "avg"))
        for t, p in zip(tensors, pointers):
            self.assertEqual(t.data_ptr(), p)
            self.assertTrue(torch.equal(t, torch.full((3, 4), 1.5)))

    def test_torch_gemm_and_bfloat16(self) -> None:
        a = torch.randn(6, 4)
        b = torch.randn(4, 5)
        c = torch.empty(6, 5)
        h = [torch.full((16,), 0.25 * (r + 1), dtype=torch.bfloat16) for r in range(2)]

        def step(w: nubo.Worker) -> None:
            if w.rank == 0:
                w.gemm(a, b, c)
            w.all_reduce(h[w.rank], "sum")

        run_on(2, step)
        self.assertTrue(torch.allclose(c, a @ b, rtol=1e-5, atol=1e-5))
        self.assertTrue(torch.equal(h[0], torch.full((16,), 0.75, dtype=torch.bfloat16)))

    def test_torch_reads_a_buffer_and_refuses_what_nubo_cannot_use(self) -> None:
        def step(w: nubo.Worker) -> None:
            b = w.buffer("i64", 3)
            w.fill(b, 5)
            t = torch.from_dlpack(b)
            self.assertEqual(t.tolist(), [5, 5, 5])
            self.assertEqual(t.data_ptr(), b.data_ptr)
            with self.assertRaises(nubo.NuboError) as raised:
                w.all_reduce(torch.ones(4, 4).t())
            self.assertIn("not compact row-major", str(raised.exception))
            with self.assertRaises(nubo.NuboError):
                w.all_reduce(torch.ones(4, dtype=torch.float64))

        run_on(1, step)


if __name__ == "__main__":
    unittest.main()
