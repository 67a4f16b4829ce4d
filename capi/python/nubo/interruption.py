"""Spot interruption notices: nubo.interruption.Watcher (docs/train.md, "Spot interruptions").

    >>> from nubo.interruption import Watcher
    >>> from nubo.train import Trainer
    >>> with Trainer(checkpoint_dir="ckpt") as t, Watcher(lambda n: t.request_stop()) as w:
    ...     print(w.cloud or "no metadata service: the watcher is off")
    ...     t.fit()   # a notice stops it after the step in progress, with a checkpoint

The watcher polls the instance metadata service of the cloud it runs on (AWS IMDSv2, GCP,
Azure; NUBO_METADATA_URL names another) and calls back once, from a thread of its own, before
the machine is taken away. It is off when no service answers within 100 ms.
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER
from typing import Any, Callable

from . import _lib
from ._abi import nubo_interruption_callback, nubo_interruption_watcher
from ._results import InterruptionNotice


WatcherPtr = POINTER(nubo_interruption_watcher)
NOTICE_CALLBACK = nubo_interruption_callback


class Watcher(_lib.Handle):
    """Calls `on_notice(InterruptionNotice)` once when the machine is about to be taken away. An
    exception from it is printed, not raised (it runs on the watcher's thread). close() stops
    polling, waiting for the watcher's thread."""

    _what = "watcher"

    def __init__(self, on_notice: Callable[[InterruptionNotice], Any],
                 poll_seconds: float = 2.0) -> None:
        def call(c: Any, _user: Any) -> None:
            n = c.contents
            on_notice(InterruptionNotice._from_c(n))

        callback = NOTICE_CALLBACK(call)
        handle = WatcherPtr()
        _lib.check(_lib.lib().nubo_interruption_watcher_create(
            callback, None, float(poll_seconds), ctypes.byref(handle)))
        self._own(handle, _lib.lib().nubo_interruption_watcher_free, callback)

    @property
    def cloud(self) -> str:
        """The cloud found ("aws", "gcp", "azure"), or "" when the watcher is off."""
        return _lib.read_text(_lib.lib().nubo_interruption_watcher_cloud, self._h())
