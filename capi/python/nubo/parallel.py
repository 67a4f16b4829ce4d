"""Teams of workers, buffers on their devices, and collectives (docs/parallel.md).

    >>> import nubo
    >>> team = nubo.Team.host(4)                    # or Team.from_report(...), Team.from_env()
    >>> def step(w: nubo.Worker) -> None:
    ...     grad = w.buffer("f32", 1024)
    ...     grad.write([float(w.rank)] * 1024)
    ...     w.all_reduce(grad, "avg")
    ...     assert grad.read(0, 1) == [1.5]
    >>> team.run(step)

run() calls the function on every worker at once, each on its own thread (the collectives
release the GIL while they wait). When one raises, the others' collectives fail at once and
run() re-raises the first exception once every worker has stopped; a failure inside nubo is a
NuboError whose message names the rank.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_uint32
from ctypes import c_void_p
from typing import Callable, Iterable, Optional, Sequence, Union

from . import _lib
from ._enum import OpenIntEnum
from ._lib import _Sized, text
from .devices import Backend, DeviceReport
from .errors import NuboError, Status


class DType(OpenIntEnum):
    """nubo_dtype: the element type of a buffer."""

    F32 = 0
    F16 = 1
    BF16 = 2
    I32 = 3
    I64 = 4


class ReduceOp(OpenIntEnum):
    """nubo_reduce_op. Integer AVG rounds towards zero."""

    SUM = 0
    AVG = 1
    MAX = 2
    MIN = 3


DTypeLike = Union[DType, str]
OpLike = Union[ReduceOp, str]
Number = Union[int, float]

# ---- ctypes mirror of capi/nubo_parallel.h -------------------------------------------------


class nubo_team(Structure):
    """Opaque."""


class nubo_worker(Structure):
    """Opaque."""


class nubo_buffer(Structure):
    """Opaque."""


class nubo_pending(Structure):
    """Opaque."""


class nubo_team_options(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("timeout_seconds", c_double),
    ]


class nubo_worker_info(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("rank", c_int),
        ("size", c_int),
        ("local_rank", c_int),
        ("local_size", c_int),
        ("backend", c_int),  # nubo_backend
        ("device_index", c_int),
        ("device_name", c_char_p),
    ]


TeamPtr = POINTER(nubo_team)
WorkerPtr = POINTER(nubo_worker)
BufferPtr = POINTER(nubo_buffer)
PendingPtr = POINTER(nubo_pending)
_status = c_int
# The run callback. A c_void_p worker, so that the callback gets a plain int it can pass back.
WORKER_FN = CFUNCTYPE(c_int, c_void_p, c_void_p)

_lib.register({
    "nubo_team_options_init": (_status, [POINTER(nubo_team_options), c_size_t]),
    "nubo_team_create": (_status, [_lib.ReportPtr, POINTER(c_size_t), c_size_t,
                                   POINTER(nubo_team_options), POINTER(TeamPtr)]),
    "nubo_team_create_host": (_status, [c_size_t, POINTER(nubo_team_options), POINTER(TeamPtr)]),
    "nubo_team_from_env": (_status, [POINTER(nubo_team_options), POINTER(TeamPtr)]),
    "nubo_team_free": (None, [TeamPtr]),
    "nubo_team_size": (c_int, [TeamPtr]),
    "nubo_team_local_size": (c_int, [TeamPtr]),
    "nubo_team_run": (_status, [TeamPtr, WORKER_FN, c_void_p]),
    "nubo_worker_fail": (_status, [c_void_p, _status, c_char_p]),
    "nubo_worker_get_info": (_status, [c_void_p, POINTER(nubo_worker_info)]),
    "nubo_worker_shard": (_status, [c_void_p, c_size_t, POINTER(c_size_t), POINTER(c_size_t)]),
    "nubo_buffer_create": (_status, [c_void_p, c_int, c_size_t, POINTER(BufferPtr)]),
    "nubo_buffer_free": (None, [BufferPtr]),
    "nubo_buffer_size": (c_size_t, [BufferPtr]),
    "nubo_buffer_bytes": (c_size_t, [BufferPtr]),
    "nubo_buffer_dtype": (_status, [BufferPtr, POINTER(c_int)]),
    "nubo_buffer_write": (_status, [BufferPtr, c_void_p, c_size_t, c_size_t]),
    "nubo_buffer_read": (_status, [BufferPtr, c_void_p, c_size_t, c_size_t]),
    "nubo_all_reduce": (_status, [c_void_p, BufferPtr, c_int]),
    "nubo_broadcast": (_status, [c_void_p, BufferPtr, c_int]),
    "nubo_all_gather": (_status, [c_void_p, BufferPtr, BufferPtr]),
    "nubo_reduce_scatter": (_status, [c_void_p, BufferPtr, BufferPtr, c_int]),
    "nubo_barrier": (_status, [c_void_p]),
    "nubo_all_reduce_async": (_status, [c_void_p, BufferPtr, c_int, POINTER(PendingPtr)]),
    "nubo_broadcast_async": (_status, [c_void_p, BufferPtr, c_int, POINTER(PendingPtr)]),
    "nubo_all_gather_async": (_status, [c_void_p, BufferPtr, BufferPtr, POINTER(PendingPtr)]),
    "nubo_reduce_scatter_async": (_status, [c_void_p, BufferPtr, BufferPtr, c_int,
                                            POINTER(PendingPtr)]),
    "nubo_barrier_async": (_status, [c_void_p, POINTER(PendingPtr)]),
    "nubo_pending_wait": (_status, [PendingPtr]),
    "nubo_pending_done": (c_int, [PendingPtr]),
    "nubo_pending_free": (None, [PendingPtr]),
})

# ---- Element conversion ----------------------------------------------------------------------

_FORMATS = {DType.F32: "f", DType.F16: "e", DType.I32: "i", DType.I64: "q", DType.BF16: "H"}
_SIZES = {DType.F32: 4, DType.F16: 2, DType.BF16: 2, DType.I32: 4, DType.I64: 8}


def _dtype(value: DTypeLike) -> DType:
    if isinstance(value, str):
        try:
            return DType[value.upper()]
        except KeyError:
            raise NuboError(Status.INVALID_ARGUMENT, f"dtype {value!r} is not one of f32, f16, "
                            "bf16, i32, i64") from None
    return DType(value)


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


class Buffer:
    """Memory on a worker's device. Freed by close() (or when garbage collected); it may outlive
    its team, but is used from one thread at a time."""

    def __init__(self, handle: ctypes._Pointer, dtype: DType) -> None:  # type: ignore[name-defined]
        self._handle: Optional[ctypes._Pointer] = handle  # type: ignore[name-defined]
        self.dtype = dtype

    def _h(self) -> ctypes._Pointer:  # type: ignore[name-defined]
        if self._handle is None:
            raise NuboError(Status.INVALID_ARGUMENT, "the buffer is closed")
        return self._handle

    @property
    def size(self) -> int:
        """Elements."""
        return int(_lib.lib().nubo_buffer_size(self._h()))

    @property
    def nbytes(self) -> int:
        return int(_lib.lib().nubo_buffer_bytes(self._h()))

    def __len__(self) -> int:
        return self.size

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

    def close(self) -> None:
        if self._handle is not None:
            _lib.lib().nubo_buffer_free(self._handle)
            self._handle = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    def __enter__(self) -> Buffer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Pending:
    """A collective in flight: wait() before touching its buffers."""

    def __init__(self, handle: ctypes._Pointer, keep: tuple[Buffer, ...]) -> None:  # type: ignore[name-defined]
        self._handle: Optional[ctypes._Pointer] = handle  # type: ignore[name-defined]
        self._keep = keep  # the buffers must outlive the collective

    def wait(self) -> None:
        """Blocks until the collective has finished; raises its failure."""
        if self._handle is not None:
            _lib.check(_lib.lib().nubo_pending_wait(self._handle))

    @property
    def done(self) -> bool:
        return self._handle is None or bool(_lib.lib().nubo_pending_done(self._handle))

    def close(self) -> None:
        """Waits if need be (dropping the error) and frees the handle."""
        if self._handle is not None:
            _lib.lib().nubo_pending_free(self._handle)
            self._handle = None
            self._keep = ()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class Worker:
    """One member of a team, handed to the function Team.run runs; valid during that call."""

    def __init__(self, handle: int) -> None:
        self._handle = handle
        info = nubo_worker_info()
        _lib.check(_lib.lib().nubo_worker_get_info(handle, ctypes.byref(info)))
        self.rank: int = info.rank
        self.size: int = info.size
        self.local_rank: int = info.local_rank
        self.local_size: int = info.local_size
        self.backend = Backend(info.backend)
        self.device_index: int = info.device_index
        self.device_name: str = text(info.device_name)

    def __repr__(self) -> str:
        return f"Worker(rank={self.rank}/{self.size}, device={self.device_name!r})"

    def shard(self, n: int) -> range:
        """This worker's rows of a batch of n: n // size each, the first n % size ranks one
        more, in rank order."""
        begin, count = c_size_t(), c_size_t()
        _lib.check(_lib.lib().nubo_worker_shard(self._handle, n, ctypes.byref(begin),
                                                ctypes.byref(count)))
        return range(begin.value, begin.value + count.value)

    def buffer(self, dtype: DTypeLike, count: int) -> Buffer:
        """A buffer of `count` elements of `dtype` ("f32", "f16", "bf16", "i32", "i64")."""
        t = _dtype(dtype)
        handle = BufferPtr()
        _lib.check(_lib.lib().nubo_buffer_create(self._handle, int(t), count,
                                                 ctypes.byref(handle)))
        return Buffer(handle, t)

    # Collectives: see nubo_parallel.h. Every rank calls the same ones in the same order.

    def all_reduce(self, buf: Buffer, op: OpLike = "sum") -> None:
        _lib.check(_lib.lib().nubo_all_reduce(self._handle, buf._h(), int(_op(op))))

    def broadcast(self, buf: Buffer, root: int = 0) -> None:
        _lib.check(_lib.lib().nubo_broadcast(self._handle, buf._h(), root))

    def all_gather(self, inp: Buffer, out: Buffer) -> None:
        _lib.check(_lib.lib().nubo_all_gather(self._handle, inp._h(), out._h()))

    def reduce_scatter(self, inp: Buffer, out: Buffer, op: OpLike = "sum") -> None:
        _lib.check(_lib.lib().nubo_reduce_scatter(self._handle, inp._h(), out._h(),
                                                  int(_op(op))))

    def barrier(self) -> None:
        _lib.check(_lib.lib().nubo_barrier(self._handle))

    def _pending(self, call: Callable[[ctypes._Pointer], int], *keep: Buffer) -> Pending:  # type: ignore[name-defined]
        handle = PendingPtr()
        _lib.check(call(ctypes.byref(handle)))
        return Pending(handle, keep)

    def all_reduce_async(self, buf: Buffer, op: OpLike = "sum") -> Pending:
        c = _lib.lib()
        return self._pending(lambda out: c.nubo_all_reduce_async(self._handle, buf._h(),
                                                                 int(_op(op)), out), buf)

    def broadcast_async(self, buf: Buffer, root: int = 0) -> Pending:
        c = _lib.lib()
        return self._pending(lambda out: c.nubo_broadcast_async(self._handle, buf._h(), root,
                                                                out), buf)

    def all_gather_async(self, inp: Buffer, out: Buffer) -> Pending:
        c = _lib.lib()
        return self._pending(lambda p: c.nubo_all_gather_async(self._handle, inp._h(), out._h(),
                                                               p), inp, out)

    def reduce_scatter_async(self, inp: Buffer, out: Buffer, op: OpLike = "sum") -> Pending:
        c = _lib.lib()
        return self._pending(lambda p: c.nubo_reduce_scatter_async(
            self._handle, inp._h(), out._h(), int(_op(op)), p), inp, out)

    def barrier_async(self) -> Pending:
        c = _lib.lib()
        return self._pending(lambda p: c.nubo_barrier_async(self._handle, p))


def _options(timeout: Optional[float]) -> nubo_team_options:
    o = nubo_team_options()
    _lib.check(_lib.lib().nubo_team_options_init(ctypes.byref(o), ctypes.sizeof(o)))
    if timeout is not None:
        o.timeout_seconds = float(timeout)
    return o


class Team:
    """A team of workers, one per device. Make one with Team.host(), Team.from_report() or
    Team.from_env(); close() it (or use `with`) when done."""

    def __init__(self, handle: ctypes._Pointer) -> None:  # type: ignore[name-defined]
        self._handle: Optional[ctypes._Pointer] = handle  # type: ignore[name-defined]

    @classmethod
    def host(cls, workers: int = 1, *, timeout: Optional[float] = None) -> Team:
        """`workers` workers on the host CPU."""
        handle = TeamPtr()
        o = _options(timeout)
        _lib.check(_lib.lib().nubo_team_create_host(workers, ctypes.byref(o),
                                                    ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def from_report(cls, report: DeviceReport, indices: Sequence[int], *,
                    timeout: Optional[float] = None) -> Team:
        """One worker per device of `report` at `indices` (e.g. [d.index for d in
        report.select(count=4)])."""
        array = (c_size_t * max(len(indices), 1))(*indices)
        handle = TeamPtr()
        o = _options(timeout)
        _lib.check(_lib.lib().nubo_team_create(report._handle, array, len(indices),
                                               ctypes.byref(o), ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def from_env(cls, *, timeout: Optional[float] = None) -> Team:
        """Joins the job nubo-run started; alone (a team of one) without it."""
        handle = TeamPtr()
        o = _options(timeout)
        _lib.check(_lib.lib().nubo_team_from_env(ctypes.byref(o), ctypes.byref(handle)))
        return cls(handle)

    def _h(self) -> ctypes._Pointer:  # type: ignore[name-defined]
        if self._handle is None:
            raise NuboError(Status.INVALID_ARGUMENT, "the team is closed")
        return self._handle

    @property
    def size(self) -> int:
        return int(_lib.lib().nubo_team_size(self._h()))

    @property
    def local_size(self) -> int:
        return int(_lib.lib().nubo_team_local_size(self._h()))

    def run(self, fn: Callable[[Worker], None]) -> None:
        """Calls fn(worker) on every worker of this process at once. Re-raises the first
        exception: the function's own, or a NuboError naming the failed rank."""
        errors: list[BaseException] = []
        lock = threading.Lock()
        c = _lib.lib()

        def call(worker: int, _user: int) -> int:
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

    def close(self) -> None:
        """Frees the team (across processes: after the others reach their end too)."""
        if self._handle is not None:
            _lib.lib().nubo_team_free(self._handle)
            self._handle = None

    def __enter__(self) -> Team:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


__all__ = ["Buffer", "DType", "Pending", "ReduceOp", "Team", "Worker"]
