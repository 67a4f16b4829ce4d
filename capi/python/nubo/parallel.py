"""Teams of workers, buffers on their devices, the compute a worker does on them, and
collectives (docs/parallel.md). Every call that takes a buffer also takes, without a copy, any
object with __dlpack__: a NumPy array, a PyTorch or CuPy tensor.

    >>> import nubo, numpy as np
    >>> team = nubo.Team.host(4)                    # or Team.from_report(...), Team.from_env()
    >>> grads = [np.full(1024, float(r), dtype=np.float32) for r in range(4)]
    >>> def step(w: nubo.Worker) -> None:
    ...     w.all_reduce(grads[w.rank], "avg")      # in place, in the array's own memory
    >>> team.run(step)
    >>> grads[0][0]
    1.5

run() calls the function on every worker at once, each on its own thread (the collectives
release the GIL while they wait). When one raises, the others' collectives fail at once and
run() re-raises the first exception once every worker has stopped; a failure inside nubo is a
NuboError whose message names the rank.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from ctypes import POINTER, c_int, c_size_t, c_void_p
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from . import _lib, dlpack, units
from ._abi import (nubo_buffer, nubo_event, nubo_optimizer_update, nubo_pending, nubo_team,
                   nubo_team_options,
                   nubo_worker, nubo_worker_fn, nubo_worker_gemm_request, nubo_worker_info,
                   nubo_worker_native_info)
from ._enum import OpenIntEnum
from ._collectives import Collectives
from ._lib import text
from ._options import filled
from .devices import Backend, DeviceReport
from .errors import NuboError, Status
from .units import DType


class ReduceOp(OpenIntEnum):
    """nubo_reduce_op. Integer AVG rounds towards zero."""

    SUM = 0
    AVG = 1
    MAX = 2
    MIN = 3


DTypeLike = Union[DType, str]
OpLike = Union[ReduceOp, str]
Number = Union[int, float]

# ---- Handles (the structs are _abi.py's, generated from nubo_parallel.h) -----------------

TeamPtr = POINTER(nubo_team)
WorkerPtr = POINTER(nubo_worker)
BufferPtr = POINTER(nubo_buffer)
PendingPtr = POINTER(nubo_pending)
EventPtr = POINTER(nubo_event)
WORKER_FN = nubo_worker_fn  # the run callback: it gets a WorkerPtr to pass back to every call


# ---- Element conversion ----------------------------------------------------------------------

_FORMATS = {DType.F32: "f", DType.F16: "e", DType.I32: "i", DType.I64: "q", DType.BF16: "H"}
_SIZES = {DType.F32: 4, DType.F16: 2, DType.BF16: 2, DType.I32: 4, DType.I64: 8}


def _dtype(value: DTypeLike) -> DType:
    dtype = units.parse_dtype(value)
    if dtype not in _SIZES:
        raise NuboError(Status.INVALID_ARGUMENT, f"dtype {value!r} is not an element type a "
                        "buffer holds: use f32, f16, bf16, i32 or i64")
    return dtype


def _op(value: OpLike) -> ReduceOp:
    if isinstance(value, str):
        try:
            return ReduceOp[value.upper()]
        except KeyError:
            raise NuboError(Status.INVALID_ARGUMENT, f"op {value!r} is not one of sum, avg, "
                            "max, min") from None
    return ReduceOp(value)


def _to_bf16(x: float) -> int:
    # Round to nearest even on the top 16 bits of the binary32, as nubo::bfloat16 does.
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _from_bf16(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b << 16))[0]


def _pack(dtype: DType, values: Sequence[Number]) -> bytes:
    if dtype == DType.BF16:
        values = [_to_bf16(float(v)) for v in values]
    return struct.pack(f"<{len(values)}{_FORMATS[dtype]}", *values)


def _unpack(dtype: DType, data: bytes) -> list[Number]:
    count = len(data) // _SIZES[dtype]
    values = list(struct.unpack(f"<{count}{_FORMATS[dtype]}", data))
    if dtype == DType.BF16:
        return [_from_bf16(v) for v in values]
    return values


# ---- Objects -----------------------------------------------------------------------------


class Buffer(_lib.Handle):
    """Memory on a worker's device: nubo's own (Worker.buffer), or another library's array
    wrapped without a copy (Worker.wrap). Freed by close() (or when garbage collected); a
    wrapped array is handed back then. It may outlive its team, but is used from one thread at
    a time. NumPy, PyTorch and CuPy read it without a copy: numpy.from_dlpack(buffer)."""

    _what = "buffer"

    def __init__(self, handle: ctypes._Pointer, dtype: Optional[DType] = None) -> None:  # type: ignore[name-defined]
        self._own(handle, _lib.lib().nubo_buffer_free)
        if dtype is None:
            raw = c_int()
            _lib.check(_lib.lib().nubo_buffer_dtype(handle, ctypes.byref(raw)))
            dtype = DType(raw.value)
        self.dtype = dtype

    @property
    def size(self) -> int:
        """Elements."""
        return int(_lib.lib().nubo_buffer_size(self._h()))

    @property
    def nbytes(self) -> int:
        return int(_lib.lib().nubo_buffer_bytes(self._h()))

    @property
    def data_ptr(self) -> int:
        """The device pointer (host memory on host and sim workers), as an int."""
        return int(_lib.lib().nubo_buffer_data(self._h()) or 0)

    def __len__(self) -> int:
        return self.size

    def slice(self, offset: int, count: int) -> Buffer:
        """A buffer viewing elements [offset, offset + count) of this one; it keeps nubo's
        memory alive after this buffer is closed."""
        handle = BufferPtr()
        _lib.check(_lib.lib().nubo_buffer_slice(self._h(), offset, count, ctypes.byref(handle)))
        return Buffer(handle, self.dtype)

    def __dlpack__(self, stream: Optional[int] = None) -> Any:
        """A DLPack capsule over this buffer's memory (the DLPack protocol: numpy.from_dlpack,
        torch.from_dlpack). On a CUDA worker, call Worker.synchronize() (or order the
        consumer's stream with an event) first: nubo does not know the consumer's stream."""
        del stream  # accepted, as the protocol asks; see above
        out = c_void_p()
        _lib.check(_lib.lib().nubo_buffer_to_dlpack(self._h(), ctypes.byref(out)))
        return dlpack.capsule_of(out.value or 0)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(device_type, device_id): (1, 0) for host memory, (2, ordinal) for a GPU's."""
        out = c_void_p()
        _lib.check(_lib.lib().nubo_buffer_to_dlpack(self._h(), ctypes.byref(out)))
        try:
            return dlpack.device_of(out.value or 0)
        finally:
            dlpack.free(out.value or 0)

    def write(self, values: Union[bytes, bytearray, memoryview, Iterable[Number]],
              offset: int = 0) -> None:
        """Copies host data in, starting at element `offset`: raw bytes of this type, or numbers
        (converted, f16 and bf16 rounded to nearest even)."""
        if isinstance(values, (bytes, bytearray, memoryview)):
            data = bytes(values)
        else:
            data = _pack(self.dtype, list(values))
        raw = ctypes.create_string_buffer(data, len(data)) if data else None
        _lib.check(_lib.lib().nubo_buffer_write(self._h(), raw, len(data),
                                                offset * _SIZES[self.dtype]))

    def read_bytes(self, offset: int = 0, count: Optional[int] = None) -> bytes:
        """`count` elements (default: to the end) from element `offset`, as raw bytes."""
        if count is None:
            count = self.size - offset
        n = count * _SIZES[self.dtype]
        raw = ctypes.create_string_buffer(max(n, 1))
        _lib.check(_lib.lib().nubo_buffer_read(self._h(), raw, n, offset * _SIZES[self.dtype]))
        return raw.raw[:n]

    def read(self, offset: int = 0, count: Optional[int] = None) -> list[Number]:
        """Elements as Python numbers (floats for f32, f16, bf16; ints for i32, i64)."""
        return _unpack(self.dtype, self.read_bytes(offset, count))



class Pending(_lib.Handle):
    """A collective in flight: wait() before touching its buffers. close() waits if need be
    (dropping the error) and frees it."""

    _what = "collective"

    def __init__(self, handle: ctypes._Pointer, keep: tuple[Buffer, ...],  # type: ignore[name-defined]
                 temporary: tuple[Buffer, ...] = ()) -> None:
        self._own(handle, _lib.lib().nubo_pending_free, keep)  # the buffers outlive it
        self._temporary = temporary  # wrappers made for the call: closed once it is over

    def wait(self) -> None:
        """Blocks until the collective has finished; raises its failure."""
        if self._handle is not None:
            try:
                _lib.check(_lib.lib().nubo_pending_wait(self._handle))
            finally:
                self._release_temporaries()

    def _release_temporaries(self) -> None:
        for b in self._temporary:
            b.close()
        self._temporary = ()

    @property
    def done(self) -> bool:
        return self._handle is None or bool(_lib.lib().nubo_pending_done(self._handle))

    def close(self) -> None:
        super().close()
        self._release_temporaries()


class Event(_lib.Handle):
    """A point in a worker's stream (Worker.record_event); done once the work queued before it
    has finished. On host and sim workers it is done at once."""

    _what = "event"

    def __init__(self, handle: ctypes._Pointer) -> None:  # type: ignore[name-defined]
        self._own(handle, _lib.lib().nubo_event_free)

    @property
    def done(self) -> bool:
        return bool(_lib.lib().nubo_event_done(self._h()))

    def synchronize(self) -> None:
        _lib.check(_lib.lib().nubo_event_synchronize(self._h()))

    @property
    def native(self) -> Optional[int]:
        """The cudaEvent_t as an int (None on host and sim workers)."""
        return _lib.lib().nubo_event_native(self._h())



@dataclass(frozen=True)
class NativeHandles:
    """What a worker computes with, for kernels of the application's own: ints (pointers), or
    None and -1 on host and sim workers."""

    cuda_stream: Optional[int]
    cublas_handle: Optional[int]
    nccl_comm: Optional[int]
    device_ordinal: int


def _pointer(value: Any, what: str) -> Optional[int]:
    """A CUDA stream or event given as an int, None, or a library's object: torch.cuda.Stream
    and Event (cuda_stream, cuda_event), CuPy's (ptr), or anything ctypes can pass
    (_as_parameter_)."""
    if value is None or isinstance(value, int):
        return value
    for attr in ("cuda_stream", "cuda_event", "ptr"):
        if isinstance(getattr(value, attr, None), int):
            return int(getattr(value, attr))
    parameter = getattr(value, "_as_parameter_", None)
    if isinstance(parameter, c_void_p):
        return parameter.value
    raise NuboError(Status.INVALID_ARGUMENT, f"a {type(value).__name__} is not a {what} (pass "
                    "an int, or a torch.cuda or CuPy object)")


def _dim(obj: Any, axis: int) -> Optional[int]:
    shape = getattr(obj, "shape", None)
    if shape is None or len(shape) != 2:
        return None
    return int(shape[axis])


class Worker(Collectives):
    """One member of a team: nubo.init() or Team.worker() for a process with one worker (valid
    until the team is closed), or handed to the function Team.run runs (valid during that
    call). Its methods may be called from any thread, the main thread included; a worker takes
    its calls one at a time.

    Buffers: every call taking one also takes any object with __dlpack__ (a NumPy array, a
    PyTorch or CuPy tensor), used in place for the call; a tensor that requires grad (a
    parameter) is used through its data, as `param.data`. Everything a worker does is ordered
    on its stream; see use_stream and docs/parallel.md for work on other streams."""

    def __init__(self, handle: "ctypes._Pointer[nubo_worker]",
                 team: Optional["Team"] = None) -> None:
        self._raw = handle
        self._team = team  # the team that lends it, kept alive by the worker; None in a run
        info = nubo_worker_info()
        _lib.check(_lib.lib().nubo_worker_get_info(handle, ctypes.byref(info)))
        self.rank: int = info.rank
        self.size: int = info.size
        self.local_rank: int = info.local_rank
        self.local_size: int = info.local_size
        self.backend = Backend(info.backend)
        self.device_index: int = info.device_index
        self.device_name: str = text(info.device_name)
        # The threads its GEMMs run on the host (its share of the cores); 0 on a GPU.
        self.host_threads: int = info.host_threads
        # The CPUs it is pinned to while it runs (cpu_bind); empty when it floats.
        self.cpus: list[int] = [info.cpus[i] for i in range(info.cpu_count)]

    @property
    def _handle(self) -> "ctypes._Pointer[nubo_worker]":
        if self._team is not None and self._team._handle is None:
            raise NuboError(Status.INVALID_ARGUMENT, "this worker's team is closed "
                            "(nubo.shutdown() or Team.close()): call nubo.init() again")
        return self._raw

    def __repr__(self) -> str:
        return f"Worker(rank={self.rank}/{self.size}, device={self.device_name!r})"

    def shard(self, n: int) -> range:
        """This worker's rows of a batch of n: n // size each, the first n % size ranks one
        more, in rank order."""
        begin, count = c_size_t(), c_size_t()
        _lib.check(_lib.lib().nubo_worker_shard(self._handle, n, ctypes.byref(begin),
                                                ctypes.byref(count)))
        return range(begin.value, begin.value + count.value)

    # ---- Memory ------------------------------------------------------------------------------

    def buffer(self, dtype: DTypeLike, count: int) -> Buffer:
        """A buffer of `count` elements of `dtype` ("f32", "f16", "bf16", "i32", "i64")."""
        t = _dtype(dtype)
        handle = BufferPtr()
        _lib.check(_lib.lib().nubo_buffer_create(self._handle, int(t), count,
                                                 ctypes.byref(handle)))
        return Buffer(handle, t)

    def wrap(self, obj: Any) -> Buffer:
        """A buffer over an object with __dlpack__ (NumPy array, PyTorch or CuPy tensor), in
        place: its elements in row-major order, one dimension. The object's memory stays alive
        until the buffer is closed. Refused with a NuboError naming the problem: another
        device, a dtype nubo has no type for (float64...), a non-contiguous or read-only array."""
        borrowed = dlpack.Borrowed(obj, self._dlpack_stream())
        handle = BufferPtr()
        _lib.check(_lib.lib().nubo_buffer_from_dlpack(self._handle, borrowed.address,
                                                      ctypes.byref(handle)))
        borrowed.adopted()
        return Buffer(handle)

    @property
    def bytes_in_use(self) -> int:
        """Device memory nubo holds on this worker's device (wrapped arrays not counted)."""
        out = c_size_t()
        _lib.check(_lib.lib().nubo_worker_bytes_in_use(self._handle, ctypes.byref(out)))
        return out.value

    def _dlpack_stream(self) -> Optional[int]:
        if self.backend != Backend.CUDA:
            return None
        return dlpack.dlpack_stream(self.native().cuda_stream or 0)

    def _operand(self, obj: Any, temporaries: list[Buffer]) -> Buffer:
        if isinstance(obj, Buffer):
            return obj
        wrapped = self.wrap(obj)
        temporaries.append(wrapped)
        return wrapped

    def _call(self, function: Callable[..., int], *objs: Any) -> None:
        """function(*buffers) on the objects as buffers; wrappers made here are closed after."""
        temporaries: list[Buffer] = []
        try:
            buffers = [self._operand(o, temporaries) for o in objs]
            _lib.check(function(*[b._h() for b in buffers]))
        finally:
            for b in temporaries:
                b.close()

    # ---- Compute -----------------------------------------------------------------------------

    def gemm(self, a: Any, b: Any, c: Any, *, trans_a: bool = False, trans_b: bool = False,
             alpha: float = 1.0, beta: float = 0.0, m: Optional[int] = None,
             n: Optional[int] = None, k: Optional[int] = None, lda: int = 0, ldb: int = 0,
             ldc: int = 0) -> None:
        """c = alpha op(a) op(b) + beta c, row-major, in the operands' type (f32, f16, bf16).
        m, n and k come from 2-D arrays' shapes; pass them for nubo Buffers (one-dimensional).
        """
        if m is None:
            m = _dim(a, 1 if trans_a else 0)
        if k is None:
            k = _dim(a, 0 if trans_a else 1)
        if n is None:
            n = _dim(b, 0 if trans_b else 1)
        if m is None or n is None or k is None:
            raise NuboError(Status.INVALID_ARGUMENT, "gemm: pass m, n and k (they come from "
                            "the shapes of 2-D arrays only)")
        g = nubo_worker_gemm_request()
        _lib.check(_lib.lib().nubo_worker_gemm_request_init(ctypes.byref(g), ctypes.sizeof(g)))
        g.trans_a, g.trans_b = int(trans_a), int(trans_b)
        g.m, g.n, g.k = m, n, k
        g.alpha, g.beta = alpha, beta
        g.lda, g.ldb, g.ldc = lda, ldb, ldc
        c_lib = _lib.lib()
        self._call(lambda ha, hb, hc: c_lib.nubo_worker_gemm(self._handle, ctypes.byref(g), ha,
                                                               hb, hc), a, b, c)

    def fill(self, x: Any, value: float) -> None:
        """Every element = value, converted to x's type."""
        c_lib = _lib.lib()
        self._call(lambda h: c_lib.nubo_worker_fill(self._handle, h, float(value)), x)

    def scale(self, x: Any, alpha: float) -> None:
        """x *= alpha (f32, f16, bf16)."""
        c_lib = _lib.lib()
        self._call(lambda h: c_lib.nubo_worker_scale(self._handle, h, float(alpha)), x)

    def axpy(self, alpha: float, x: Any, y: Any) -> None:
        """y += alpha * x (f32, f16, bf16)."""
        c_lib = _lib.lib()
        self._call(lambda hx, hy: c_lib.nubo_worker_axpy(self._handle, float(alpha), hx, hy),
                   x, y)

    def cast(self, inp: Any, out: Any) -> None:
        """out = inp converted between f32, f16 and bf16 (the same size)."""
        c_lib = _lib.lib()
        self._call(lambda hi, ho: c_lib.nubo_worker_cast(self._handle, hi, ho), inp, out)

    def unscale_check(self, grads: Any, inv_scale: float, stats: Any) -> None:
        """grads *= inv_scale; then stats (2 f32) gets stats[0] = 1 on a non-finite element and
        stats[1] += the sum of the squares: a loss scaler's unscale and a clipper's norm."""
        c_lib = _lib.lib()
        self._call(lambda hg, hs: c_lib.nubo_worker_unscale_check(self._handle, hg,
                                                                  float(inv_scale), hs),
                   grads, stats)

    def optimizer_step(self, master: Any, grads: Any, m: Any, v: Any = None, params: Any = None,
                       *, kind: str = "adamw", lr: float = 1e-3, momentum: float = 0.9,
                       beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                       weight_decay: float = 0.0, step: int = 1,
                       grad_scale: float = 1.0) -> None:
        """The fused update of `master` (f32) from `grads` (f32, f16 or bf16) with the state m
        (SGD's velocity, Adam's first moment) and v (Adam's second; None for SGD); `params`, when
        given, receives the result in its own type. kind: "sgd", "adam" or "adamw"."""
        from .optimizer import _rule
        u = nubo_optimizer_update()
        _lib.check(_lib.lib().nubo_optimizer_update_init(ctypes.byref(u), ctypes.sizeof(u)))
        u.kind = int(_rule(kind))
        u.lr, u.momentum, u.beta1, u.beta2, u.eps = lr, momentum, beta1, beta2, eps
        u.weight_decay, u.step, u.grad_scale = weight_decay, step, grad_scale
        c_lib = _lib.lib()
        objs = [master, grads, m] + [x for x in (v, params) if x is not None]

        def call(*h: Any) -> int:
            it = iter(h[3:])
            hv = next(it) if v is not None else None
            hp = next(it) if params is not None else None
            return c_lib.nubo_worker_optimizer_step(self._handle, ctypes.byref(u), h[0], h[1],
                                                    h[2], hv, hp)
        self._call(call, *objs)

    def synchronize(self) -> None:
        """Blocks until everything this worker queued has finished (CUDA; at once elsewhere)."""
        _lib.check(_lib.lib().nubo_worker_synchronize(self._handle))

    # ---- Streams and events ------------------------------------------------------------------

    def native(self) -> NativeHandles:
        """The CUDA stream, cuBLAS handle and NCCL communicator this worker uses."""
        h = nubo_worker_native_info()
        _lib.check(_lib.lib().nubo_worker_native(self._handle, ctypes.byref(h)))
        return NativeHandles(h.cuda_stream, h.cublas_handle, h.nccl_comm, h.device_ordinal)

    def use_stream(self, stream: Any) -> None:
        """Queue everything from now on, collectives included, on `stream` (an int
        cudaStream_t, torch.cuda.current_stream(), a CuPy stream; 0 or None is CUDA's default
        stream), after the work queued so far."""
        _lib.check(_lib.lib().nubo_worker_use_stream(self._handle, _pointer(stream, "stream")))

    def use_own_stream(self) -> None:
        _lib.check(_lib.lib().nubo_worker_use_own_stream(self._handle))

    def record_event(self) -> Event:
        handle = EventPtr()
        _lib.check(_lib.lib().nubo_worker_record_event(self._handle, ctypes.byref(handle)))
        return Event(handle)

    def wait_event(self, event: Event) -> None:
        """This worker's later work waits for `event`, without blocking the thread."""
        _lib.check(_lib.lib().nubo_worker_wait_event(self._handle, event._h()))

    def wait_native_event(self, event: Any) -> None:
        """This worker's later work waits for a CUDA event the application recorded on a stream
        of its own (an int cudaEvent_t, a torch.cuda.Event)."""
        _lib.check(_lib.lib().nubo_worker_wait_native_event(self._handle,
                                                            _pointer(event, "CUDA event")))

    # ---- Collectives: generated (nubo/_collectives.py), from these helpers -----------------

    _op = staticmethod(_op)

    def _pending(self, call: Callable[..., int], *objs: Any) -> Pending:
        temporaries: list[Buffer] = []
        try:
            buffers = [self._operand(o, temporaries) for o in objs]
            handle = PendingPtr()
            _lib.check(call(*[b._h() for b in buffers], ctypes.byref(handle)))
        except BaseException:
            for b in temporaries:
                b.close()
            raise
        return Pending(handle, tuple(buffers), tuple(temporaries))


# The short names two team options go by in Python; every other option is its C field's name.
_TEAM_OPTION_NAMES = {"timeout": "timeout_seconds", "health_watch": "health_watch_seconds"}


def _options(options: dict[str, Any]) -> nubo_team_options:
    """nubo_team_options from keyword arguments (timeout, cpu_bind, health_watch, or any field
    of the struct by name); None keeps the library's default, an unknown name is a TypeError."""
    return filled(nubo_team_options, "nubo_team_options_init",
                  **{_TEAM_OPTION_NAMES.get(k, k): v for k, v in options.items()})


class Team(_lib.Handle):
    """A team of workers, one per device. Make one with Team.host(), Team.from_report() or
    Team.from_env(); close() it (or use `with`) when done: across processes, it is freed after
    the others reach their end too."""

    _what = "team"

    def __init__(self, handle: ctypes._Pointer) -> None:  # type: ignore[name-defined]
        self._own(handle, _lib.lib().nubo_team_free)

    @classmethod
    def host(cls, workers: int = 1, **options: Any) -> Team:
        """`workers` workers on the host CPU, sharing its cores (cpu_bind=True: each pinned to
        its own). Options: timeout (seconds), cpu_bind, and any field of nubo_team_options."""
        handle = TeamPtr()
        o = _options(options)
        _lib.check(_lib.lib().nubo_team_create_host(workers, ctypes.byref(o),
                                                    ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def from_report(cls, report: DeviceReport, indices: Sequence[int], **options: Any) -> Team:
        """One worker per device of `report` at `indices` (e.g. [d.index for d in
        report.select(count=4)]). health_watch: seconds between health reads of the GPUs; a
        new fatal XID or ECC error makes every collective raise, naming the GPU."""
        array = (c_size_t * max(len(indices), 1))(*indices)
        handle = TeamPtr()
        o = _options(options)
        _lib.check(_lib.lib().nubo_team_create(report._h(), array, len(indices),
                                               ctypes.byref(o), ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def join(cls, **options: Any) -> Team:
        """Joins the job that started this process, as from_env(), for use from the caller's
        own loop: team.worker() is this process's worker (nubo.init() does both)."""
        handle = TeamPtr()
        o = _options(options)
        _lib.check(_lib.lib().nubo_team_join(ctypes.byref(o), ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def from_env(cls, **options: Any) -> Team:
        """Joins the job that started this process (nubo-run, torchrun, srun, mpirun or
        SkyPilot); alone (a team of one) without one."""
        handle = TeamPtr()
        o = _options(options)
        _lib.check(_lib.lib().nubo_team_from_env(ctypes.byref(o), ctypes.byref(handle)))
        return cls(handle)

    @property
    def size(self) -> int:
        return int(_lib.lib().nubo_team_size(self._h()))

    @property
    def local_size(self) -> int:
        return int(_lib.lib().nubo_team_local_size(self._h()))

    def describe(self) -> str:
        """What the team is made of: a line per worker of this process (device, GEMM threads
        and why, pinned CPUs), then the link between the processes."""
        return _lib.read_text(_lib.lib().nubo_team_describe, self._h())

    def worker(self, local_rank: int = 0) -> Worker:
        """This process's worker number local_rank, usable from any thread until the team is
        closed."""
        handle = WorkerPtr()
        _lib.check(_lib.lib().nubo_team_worker(self._h(), local_rank, ctypes.byref(handle)))
        return Worker(handle, self)

    def run(self, fn: Callable[[Worker], None]) -> None:
        """Calls fn(worker) on every worker of this process at once. Re-raises the first
        exception: the function's own, or a NuboError naming the failed rank."""
        errors: list[BaseException] = []
        lock = threading.Lock()
        c = _lib.lib()

        def call(worker: "ctypes._Pointer[nubo_worker]", _user: Optional[int]) -> int:
            try:
                fn(Worker(worker))
                return int(Status.OK)
            except NuboError as e:
                with lock:
                    errors.append(e)
                return int(e.status)  # the message is this thread's last error already
            except BaseException as e:  # noqa: BLE001 - handed back to the caller below
                with lock:
                    errors.append(e)
                message = f"{type(e).__name__}: {e}".encode("utf-8", errors="replace")
                return int(c.nubo_worker_fail(worker, int(Status.CANCELLED), message))

        callback = WORKER_FN(call)  # kept alive by this frame until the run returns
        status = c.nubo_team_run(self._h(), callback, None)
        if status == Status.OK:
            return
        team_error = _lib.error(status)
        first = errors[0] if errors else None
        if first is not None and not isinstance(first, NuboError):
            raise first from team_error
        raise team_error



__all__ = ["Buffer", "DType", "Event", "NativeHandles", "Pending", "ReduceOp", "Team", "Worker"]
