"""PyTorch's DistributedDataParallel over nubo: communication hooks that reduce DDP's gradient
buckets with nubo's collectives (shared memory between the processes of a host, hierarchical
across hosts, NCCL on GPUs) instead of DDP's process group. An existing DDP script changes by
one line:

    >>> import nubo.torch
    >>> model = torch.nn.parallel.DistributedDataParallel(model)
    >>> model.register_comm_hook(None, nubo.torch.allreduce_hook)

The hooks join the job on first use (nubo.init()), from whatever launcher started the process.
The state passed to register_comm_hook is None (this process's worker) or a nubo.Worker.

- allreduce_hook: averages the bucket, as DDP's default hook does;
- bf16_compress_hook, fp16_compress_hook: send the bucket as bfloat16 or float16 (half the
  bytes) and write the average back in the bucket's own type, as PyTorch's hooks of those names.
  nubo sums the 16-bit values in float32 and rounds once, where PyTorch's hooks divide and add
  in 16 bits.

A bucket of a type nubo does not reduce (float64, complex) goes through torch.distributed's
default process group when there is one, with a warning once; without one, the hook fails
naming the type. A collective that fails (a rank that died, a timeout) fails DDP's backward
with nubo's message, naming the rank.
"""

# No `from __future__ import annotations` here: DDP's register_comm_hook compares the hook's
# annotations with dist.GradBucket and torch.futures.Future[torch.Tensor] as objects.
import atexit
import queue
import threading
import warnings
from typing import Any, Callable, Optional

import torch
import torch.distributed as dist

from . import process
from .errors import NuboError, Status
from .devices import Backend
from .parallel import Pending, Worker

__all__ = ["allreduce_hook", "bf16_compress_hook", "fp16_compress_hook"]

# The types nubo's collectives reduce.
_NUBO_TYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64)


def _worker_of(state: Any) -> Worker:
    if state is None:
        return process.init()
    if isinstance(state, Worker):
        return state
    if dist.is_available() and isinstance(state, dist.ProcessGroup):
        w = process.init()
        if state.size() == w.size:
            return w
        raise NuboError(Status.INVALID_ARGUMENT, f"the hook's state is a process group of "
                        f"{state.size()} ranks, but nubo's job has {w.size}: nubo's hooks reduce "
                        "over the whole job (pass None)")
    raise NuboError(Status.INVALID_ARGUMENT, f"the hook's state is a {type(state).__name__}: "
                    "pass None (this process's worker) or a nubo.Worker")


class _Outcome:
    """A collective's result or failure, handed to DDP through a future. A failure is raised in
    a `then` callback: that is what marks the future failed for DDP's C++ side, which
    Future.set_exception does not (it stores the exception as the future's value)."""

    def __init__(self) -> None:
        self.value: Optional[torch.Tensor] = None
        self.error: Optional[BaseException] = None

    def unpack(self, _settled: "torch.futures.Future[torch.Tensor]") -> torch.Tensor:
        if self.error is not None:
            raise self.error
        assert self.value is not None
        return self.value


class _Completion:
    """The thread that waits for the hooks' collectives, in the order they were issued (the
    order they complete in), and settles DDP's futures. The hook itself returns at once, so the
    backward pass goes on computing while nubo reduces."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self._stop_registered = False

    def submit(self, pending: Pending, worker: Worker, finish: Callable[[], torch.Tensor]
               ) -> "torch.futures.Future[torch.Tensor]":
        outcome = _Outcome()
        settled: torch.futures.Future = torch.futures.Future()
        future = settled.then(outcome.unpack)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="nubo-ddp-hook",
                                                daemon=True)
                self._thread.start()
                if not self._stop_registered:
                    # Registered after nubo.init()'s shutdown, so it runs first (atexit is
                    # last in, first out): the queued collectives finish while the team lives.
                    atexit.register(self._stop)
                    self._stop_registered = True
            self._queue.put((pending, worker, finish, outcome, settled))
        return future

    def _stop(self) -> None:
        """Settles what is queued and ends the thread, at interpreter exit. A daemon thread left
        running would be cut off by the interpreter's finalization wherever it stands, which
        inside PyTorch's future callbacks aborts the process (std::terminate), and loses the
        application's callbacks still to run."""
        with self._lock:
            thread = self._thread
            if thread is None or not thread.is_alive():
                return
            self._queue.put(None)
        thread.join()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            pending, worker, finish, outcome, settled = item
            try:
                pending.wait()
                if worker.backend == Backend.CUDA:
                    # DDP reads the bucket on its own stream: the result must be in place.
                    worker.synchronize()
                outcome.value = finish()
            except BaseException as e:  # noqa: BLE001 - handed to DDP through its future
                outcome.error = e
            pending.close()
            settled.set_result(torch.empty(0))


_completion = _Completion()
_fallback_warned: set = set()


def _through_process_group(tensor: torch.Tensor) -> "torch.futures.Future[torch.Tensor]":
    """A bucket nubo cannot reduce, through torch.distributed's default group, averaged as DDP
    does."""
    if not (dist.is_available() and dist.is_initialized()):
        raise NuboError(Status.UNSUPPORTED, f"a gradient bucket of {tensor.dtype}: nubo reduces "
                        "float32, float16, bfloat16, int32 and int64, and there is no "
                        "torch.distributed process group to fall back on")
    if tensor.dtype not in _fallback_warned:
        _fallback_warned.add(tensor.dtype)
        warnings.warn(f"nubo.torch: gradient buckets of {tensor.dtype} go through "
                      f"torch.distributed's {dist.get_backend()} group; nubo reduces float32, "
                      "float16, bfloat16, int32 and int64", RuntimeWarning, stacklevel=3)
    tensor.div_(dist.get_world_size())
    work = dist.all_reduce(tensor, async_op=True)
    return work.get_future().then(lambda f: f.value()[0])


def _done(value: torch.Tensor) -> "torch.futures.Future[torch.Tensor]":
    future: torch.futures.Future = torch.futures.Future()
    future.set_result(value)
    return future


def _average(state: Any, bucket: Any,
             wire: Optional[torch.dtype]) -> "torch.futures.Future[torch.Tensor]":
    """The bucket's average over the job, sent as `wire` (None: the bucket's own type)."""
    tensor = bucket.buffer()
    if tensor.numel() == 0:
        return _done(tensor)
    if wire is None and tensor.dtype not in _NUBO_TYPES:
        return _through_process_group(tensor)
    if wire is not None and not tensor.is_floating_point():
        raise NuboError(Status.INVALID_ARGUMENT, f"a gradient bucket of {tensor.dtype} cannot "
                        f"be sent as {wire}: compression is for floating-point gradients")
    worker = _worker_of(state)
    on_gpu = worker.backend == Backend.CUDA
    if tensor.device.type != ("cuda" if on_gpu else "cpu"):
        raise NuboError(Status.INVALID_ARGUMENT, f"the gradient bucket is on {tensor.device}, but "
                        f"this process's nubo worker is on {worker.device_name}: a model on the "
                        "CPU of a machine with GPUs reduces through a CPU worker (set "
                        "NUBO_CUDA=0), a model on a GPU through that GPU's worker")
    sent = tensor if wire is None or tensor.dtype == wire else tensor.to(wire)
    if not sent.is_contiguous():
        sent = sent.contiguous()

    def finish() -> torch.Tensor:
        if sent is not tensor:
            tensor.copy_(sent)  # back into the bucket, in its own type
        return tensor

    return _completion.submit(worker.all_reduce_async(sent, "avg"), worker, finish)


def allreduce_hook(state: Any, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP's default communication, over nubo: the bucket averaged over every rank."""
    return _average(state, bucket, None)


def nubo_bf16_compress_hook(state: Any,
                            bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """The bucket sent as bfloat16 (half the bytes of float32), averaged, and written back in
    its own type."""
    return _average(state, bucket, torch.bfloat16)


# DDP refuses a hook whose function is named bf16_compress_hook unless CUDA and NCCL are present
# (it takes it for PyTorch's own, which needs them); nubo's runs everywhere, so its function
# carries another name.
bf16_compress_hook = nubo_bf16_compress_hook


def fp16_compress_hook(state: Any,
                       bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """The bucket sent as float16 (half the bytes of float32), averaged, and written back in
    its own type."""
    return _average(state, bucket, torch.float16)
