"""The data-parallel trainer: nubo.train over nubo_train.h (docs/train.md in nubo).

    >>> from nubo.train import Trainer
    >>> t = Trainer(hidden=(256, 128), devices="cpu:2", epochs=10)
    >>> t.fit(progress=lambda p: print(p.epoch, p.step, p.loss) or True)
    >>> t.evaluate().accuracy
    >>> t.save("ckpt.nubo"); t.profile()  # the profile as a dict (docs/profile.schema.json)

A progress callable returning False stops training after the step (fit() then raises
NuboError with status CANCELLED; calling fit() again continues). An exception raised by the
callable stops training too and is re-raised by fit().
"""

from __future__ import annotations

import ctypes
import json
import os
from ctypes import POINTER, c_size_t
from typing import Any, Callable, Optional, Sequence, Union

from . import _lib
from ._abi import (nubo_train_evaluation_info, nubo_train_options, nubo_train_progress,
                   nubo_train_progress_callback, nubo_trainer)
from ._enum import OpenIntEnum
from ._progress import ProgressCall
from ._results import Evaluation, TrainProgress
from .parallel import Team, _dtype
from .units import DType

StrPath = Union[str, "os.PathLike[str]"]


class Optimizer(OpenIntEnum):
    """nubo_train_optimizer."""

    SGD = 0
    ADAM = 1


# ---- Handles and callbacks (the structs are _abi.py's, generated from nubo_train.h) ------

TrainerPtr = POINTER(nubo_trainer)
PROGRESS_CALLBACK = nubo_train_progress_callback


ProgressFn = Callable[[TrainProgress], Any]


def _progress(c: nubo_train_progress) -> TrainProgress:
    return TrainProgress._from_c(c)


_path = _lib.path_bytes


class Trainer(_lib.Handle):
    """An MLP classifier on Fashion-MNIST, trained data-parallel (nubo::DataParallelTrainer).

    `layers` gives every width (input first, classes last); otherwise `hidden` gives the hidden
    ones between the data's 784 inputs and 10 classes. `team` (a nubo.Team, which must outlive
    the trainer) overrides `devices` ("cpu", "cpu:N", "sim:N", "cuda:I[,J...]"). `subset` uses
    the first N rows of the train and test sets. Checkpoints are written in the background
    while training goes on unless `sync_checkpoints`. `checkpoint_every="auto"` sets the
    interval by Daly's formula from the measured write time and `mtbi_s`, the mean time between
    interruptions. With a `checkpoint_dir`, the trainer continues from the newest checkpoint
    there that verifies (`resumed_from`) unless `fresh`. `zero_stage` (0-3) shards the optimizer
    state, then the gradients, then the parameters; `precision` "bf16" or "f16" trains with
    fp32 master weights (f16 with loss scaling); `grad_compression` "bf16"/"f16" carries f32
    gradients in 16 bits (`error_feedback` adds each worker's rounding to its next step);
    `accumulate` micro-batches make one step; `max_grad_norm` clips."""

    _what = "trainer"

    def __init__(self, *, layers: Optional[Sequence[int]] = None,
                 hidden: Optional[Sequence[int]] = None, optimizer: Union[Optimizer, str] = "sgd",
                 lr: float = 0.05, momentum: float = 0.9, batch: int = 128, epochs: int = 10,
                 seed: int = 1, bucket_bytes: int = 25 << 20, autotune: bool = False,
                 devices: Optional[str] = None, team: Optional[Team] = None,
                 dataset_dir: Optional[StrPath] = None, subset: int = 0,
                 checkpoint_dir: Optional[StrPath] = None,
                 checkpoint_every: Union[int, str] = 0, mtbi_s: float = 0, fresh: bool = False,
                 strict_resume: bool = False, sync_checkpoints: bool = False,
                 zero_stage: int = 0, precision: Union[DType, str] = "f32",
                 grad_compression: Optional[Union[DType, str]] = None,
                 error_feedback: bool = False, accumulate: int = 1,
                 max_grad_norm: float = 0) -> None:
        o = nubo_train_options()
        _lib.check(_lib.lib().nubo_train_options_init(ctypes.byref(o), ctypes.sizeof(o)))
        if layers is None and hidden is not None:
            layers = [784, *hidden, 10]
        self._layers = (c_size_t * max(len(layers or ()), 1))(*(layers or ()))
        if layers:
            o.layers = self._layers
            o.layer_count = len(layers)
        if isinstance(optimizer, str):
            names = {"sgd": Optimizer.SGD, "adam": Optimizer.ADAM}
            if optimizer not in names:
                raise ValueError(f"optimizer {optimizer!r}: use 'sgd' or 'adam'")
            optimizer = names[optimizer]
        o.optimizer = int(optimizer)
        o.lr, o.momentum, o.batch, o.epochs, o.seed = lr, momentum, batch, epochs, seed
        o.bucket_bytes, o.autotune, o.subset = bucket_bytes, int(autotune), subset
        if checkpoint_every == "auto":
            o.checkpoint_auto, o.mtbi_s = 1, mtbi_s
        elif isinstance(checkpoint_every, str):
            raise ValueError(f"checkpoint_every {checkpoint_every!r}: a number of steps or 'auto'")
        else:
            o.checkpoint_every = checkpoint_every
        o.strict_resume = int(strict_resume)
        o.sync_checkpoints = int(sync_checkpoints)
        o.fresh = int(fresh)
        o.zero_stage, o.accumulate, o.max_grad_norm = zero_stage, accumulate, max_grad_norm
        o.precision = int(_dtype(precision))
        o.grad_compression = int(_dtype(grad_compression or "f32"))
        o.error_feedback = int(error_feedback)
        if devices is not None:
            o.devices = devices.encode()
        if team is not None:
            o.team = team._h()
        if dataset_dir is not None:
            o.dataset_dir = _path(dataset_dir)
        if checkpoint_dir is not None:
            o.checkpoint_dir = _path(checkpoint_dir)
        handle = TrainerPtr()
        _lib.check(_lib.lib().nubo_trainer_create(ctypes.byref(o), ctypes.byref(handle)))
        self._own(handle, _lib.lib().nubo_trainer_free, team)  # the team outlives the trainer

    def fit(self, progress: Optional[ProgressFn] = None) -> None:
        """Trains to `epochs` epochs in all. `progress(TrainProgress)` is called after each
        step; returning False stops (NuboError CANCELLED). Ctrl-C stops too, after the step in
        progress and its checkpoint (with a checkpoint_dir), and is re-raised."""
        handle = self._h()
        call = ProgressCall(PROGRESS_CALLBACK, _progress, progress)
        call.run(lambda: _lib.lib().nubo_trainer_fit(handle, call.c, None))

    def evaluate(self) -> Evaluation:
        """Loss and accuracy on the test set."""
        e = nubo_train_evaluation_info()
        _lib.check(_lib.lib().nubo_trainer_evaluate(self._h(), ctypes.byref(e)))
        return Evaluation._from_c(e)

    def save(self, path: StrPath) -> None:
        _lib.check(_lib.lib().nubo_trainer_save(self._h(), _path(path)))

    def load(self, path: StrPath) -> None:
        _lib.check(_lib.lib().nubo_trainer_load(self._h(), _path(path)))

    @property
    def steps_done(self) -> int:
        return int(_lib.lib().nubo_trainer_steps_done(self._h()))

    def request_stop(self) -> None:
        """Asks fit() to stop after the step in progress, with a checkpoint (from any thread: a
        nubo.interruption.Watcher's callback, a signal handler)."""
        if self._handle is not None:
            _lib.lib().nubo_trainer_request_stop(self._h())

    @property
    def resumed_from(self) -> Optional[str]:
        """The checkpoint the trainer continued from when it was made, or None."""
        path = _lib.read_text(_lib.lib().nubo_trainer_resumed_from, self._h())
        return path or None

    def profile_json(self) -> str:
        """The run's profile (docs/profile.schema.json), as nubo-cost plan --profile reads it."""
        return _lib.read_text(_lib.lib().nubo_trainer_profile_json, self._h())

    def profile(self) -> dict[str, Any]:
        return json.loads(self.profile_json())  # type: ignore[no-any-return]



__all__ = ["Evaluation", "Optimizer", "TrainProgress", "Trainer", "nubo_train_evaluation_info",
           "nubo_train_options", "nubo_train_progress"]
