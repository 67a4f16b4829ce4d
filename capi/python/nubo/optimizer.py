"""The sharded optimizer (docs/sharded.md): SGD, Adam and AdamW over a flat buffer of parameters
the application owns (a nubo Buffer, or a NumPy array or PyTorch tensor through DLPack), with
the state sharded across the team (ZeRO stages 1 to 3), fp32 master weights for bf16/f16
parameters, fp16's dynamic loss scaling, clipping, 16-bit gradients on the wire, and checkpoints
that resume on any world size.

    n = sum(p.numel() for p in model.parameters())
    padded = nubo.ShardedOptimizer.padded_size(w.size, [n], precision="bf16")
    flat = torch.zeros(padded, dtype=torch.bfloat16)     # the model's parameters live in it
    grads = torch.zeros_like(flat)
    opt = nubo.ShardedOptimizer(w, flat, lr=1e-3, stage=1, precision="bf16")
    for batch in data:
        ...backward into grads...
        opt.step(grads)                                   # flat holds the update
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_float, c_size_t, c_uint64
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

from . import _lib
from ._abi import (nubo_shard_slice_info, nubo_sharded_memory_info, nubo_sharded_optimizer,
                   nubo_sharded_options, nubo_sharded_step_summary)
from ._enums import LossScaling, OptimizerKind
from ._options import filled
from ._results import ShardedMemory, StepResult
from .errors import NuboError, Status
from .parallel import Buffer, BufferPtr, Worker, _dtype, _op

__all__ = ["LossScaling", "OptimizerKind", "ShardSlice", "ShardedMemory", "ShardedOptimizer",
           "StepResult", "sharded_memory"]

OptimizerPtr = POINTER(nubo_sharded_optimizer)
RuleLike = Union[OptimizerKind, str]


def _rule(value: RuleLike) -> OptimizerKind:
    if isinstance(value, str):
        try:
            return OptimizerKind[value.upper()]
        except KeyError:
            raise NuboError(Status.INVALID_ARGUMENT, f"optimizer {value!r}: use 'sgd', 'adam' "
                            "or 'adamw'") from None
    return OptimizerKind(value)


def _sizes(slices: Sequence[int]) -> Any:
    return (c_size_t * max(len(slices), 1))(*slices)


def _options(**kw: Any) -> nubo_sharded_options:
    if kw.get("optimizer") is not None:
        kw["optimizer"] = int(_rule(kw["optimizer"]))
    for name in ("precision", "wire"):
        if kw.get(name) is not None:
            kw[name] = int(_dtype(kw[name]))
    if kw.get("gradient_op") is not None:
        kw["gradient_op"] = int(_op(kw["gradient_op"]))
    if kw.get("loss_scaling") is not None and isinstance(kw["loss_scaling"], str):
        kw["loss_scaling"] = int(LossScaling[kw["loss_scaling"].upper()])
    return filled(nubo_sharded_options, "nubo_sharded_options_init", **kw)


@dataclass(frozen=True)
class ShardSlice:
    """Slice i of the layout: its parameters, where it starts in the flat buffer, the elements
    it takes there (padded), and each rank's shard of it."""

    size: int
    offset: int
    padded: int
    shard: int
    shard_offset: int


def sharded_memory(parameters: float, stage: int, optimizer: RuleLike = "adamw",
                   precision: Any = "bf16", world: int = 1) -> ShardedMemory:
    """Bytes per worker of a model of `parameters` at a ZeRO stage (docs/sharded.md)."""
    out = nubo_sharded_memory_info()
    out.struct_size = ctypes.sizeof(out)
    _lib.check(_lib.lib().nubo_sharded_memory_per_worker(
        float(parameters), stage, int(_rule(optimizer)), int(_dtype(precision)), world,
        ctypes.byref(out)))
    return ShardedMemory._from_c(out)


class ShardedOptimizer(_lib.Handle):
    """SGD, Adam or AdamW over `params`, this worker's flat parameters (padded_size() elements
    of `precision`; rank 0's values are broadcast). Every rank of the team creates it together.
    Keyword options are nubo_sharded_options' (None: the library's default): optimizer ("sgd",
    "adam", "adamw"), lr, momentum, beta1, beta2, eps, weight_decay, stage (0-3), precision
    ("f32", "bf16", "f16"), gradient_op ("avg", "sum"), max_grad_norm, loss_scaling
    ("automatic", "on", "off"), init_scale, growth_factor, backoff_factor, growth_interval, wire
    ("bf16"/"f16" to compress f32 gradients), error_feedback. `slices` cuts the buffer into
    slices (layers, buckets; default one)."""

    _what = "optimizer"

    @staticmethod
    def padded_size(world: int, slices: Sequence[int], **options: Any) -> int:
        out = c_size_t()
        o = _options(**options)
        _lib.check(_lib.lib().nubo_sharded_padded_size(ctypes.byref(o), world, _sizes(slices),
                                                       len(slices), ctypes.byref(out)))
        return out.value

    def __init__(self, worker: Worker, params: Any, *, slices: Optional[Sequence[int]] = None,
                 **options: Any) -> None:
        self._worker = worker
        self._precision = _dtype(options.get("precision") or "f32")
        o = _options(**options)
        self._params = worker._operand(params, [])  # kept: stages 0-2 write into it
        handle = OptimizerPtr()
        sl = list(slices or [])
        _lib.check(_lib.lib().nubo_sharded_optimizer_create(
            worker._handle, self._params._h(), ctypes.byref(o), _sizes(sl), len(sl),
            ctypes.byref(handle)))
        self._own(handle, _lib.lib().nubo_sharded_optimizer_free, self._params)
        self._reducing: list[Buffer] = []  # what reduce() was given, alive until step()

    @property
    def slices(self) -> list[ShardSlice]:
        count = c_size_t()
        _lib.check(_lib.lib().nubo_sharded_optimizer_slice_count(self._h(), ctypes.byref(count)))
        out = []
        for i in range(count.value):
            s = nubo_shard_slice_info()
            s.struct_size = ctypes.sizeof(s)
            _lib.check(_lib.lib().nubo_sharded_optimizer_slice(self._h(), i, ctypes.byref(s)))
            out.append(ShardSlice(s.size, s.offset, s.padded, s.shard, s.shard_offset))
        return out

    @property
    def loss_scale(self) -> float:
        """Multiply the loss by it before backward (1 without loss scaling)."""
        out = c_float()
        _lib.check(_lib.lib().nubo_sharded_optimizer_loss_scale(self._h(), ctypes.byref(out)))
        return out.value

    @property
    def steps(self) -> int:
        out = c_uint64()
        _lib.check(_lib.lib().nubo_sharded_optimizer_steps(self._h(), ctypes.byref(out)))
        return out.value

    @property
    def bytes_communicated(self) -> int:
        out = c_uint64()
        _lib.check(_lib.lib().nubo_sharded_optimizer_bytes_communicated(self._h(),
                                                                        ctypes.byref(out)))
        return out.value

    def set_lr(self, lr: float) -> None:
        _lib.check(_lib.lib().nubo_sharded_optimizer_set_lr(self._h(), float(lr)))

    def reduce(self, slice_index: int, grads: Any) -> None:
        """Slice i's gradients (its padded elements) combined across the team, started now so
        that they overlap the rest of backward; untouched until step() returns."""
        b = self._worker._operand(grads, self._reducing)
        _lib.check(_lib.lib().nubo_sharded_optimizer_reduce(self._h(), slice_index, b._h()))

    def step(self, grads: Any = None) -> StepResult:
        """The update: from the whole gradient buffer, or (None) the slices reduce() was given."""
        temporaries: list[Buffer] = []
        out = nubo_sharded_step_summary()
        out.struct_size = ctypes.sizeof(out)
        try:
            g = None if grads is None else self._worker._operand(grads, temporaries)._h()
            _lib.check(_lib.lib().nubo_sharded_optimizer_step(self._h(), g, ctypes.byref(out)))
        finally:
            for b in temporaries + self._reducing:
                b.close()
            self._reducing = []
        return StepResult._from_c(out)

    def gather(self, slice_index: int) -> Buffer:
        """Stage 3: slice i's parameters gathered from the team (numpy.from_dlpack reads it)."""
        handle = BufferPtr()
        _lib.check(_lib.lib().nubo_sharded_optimizer_gather(self._h(), slice_index,
                                                            ctypes.byref(handle)))
        return Buffer(handle, self._precision)

    def prefetch(self, slice_index: int) -> None:
        _lib.check(_lib.lib().nubo_sharded_optimizer_prefetch(self._h(), slice_index))

    def release(self, slice_index: int) -> None:
        _lib.check(_lib.lib().nubo_sharded_optimizer_release(self._h(), slice_index))

    def save(self, path: str) -> None:
        _lib.check(_lib.lib().nubo_sharded_optimizer_save(self._h(), _lib.path_bytes(path)))

    def load(self, path: str) -> None:
        _lib.check(_lib.lib().nubo_sharded_optimizer_load(self._h(), _lib.path_bytes(path)))


