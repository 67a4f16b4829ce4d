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
from typing import Any, Callable, Optional

from . import _lib
from ._abi import nubo_interruption_callback, nubo_interruption_watcher
from ._results import InterruptionNotice


WatcherPtr = POINTER(nubo_interruption_watcher)
NOTICE_CALLBACK = nubo_interruption_callback


class Watcher:
    """Calls `on_notice(InterruptionNotice)` once when the machine is about to be taken away. An
    exception from it is printed, not raised (it runs on the watcher's thread)."""

    def __init__(self, on_notice: Callable[[InterruptionNotice], Any],
                 poll_seconds: float = 2.0) -> None:
        def call(c: Any, _user: Any) -> None:
            n = c.contents
            on_notice(InterruptionNotice._from_c(n))

        self._callback = NOTICE_CALLBACK(call)  # kept alive as long as the watcher
        self._handle: Optional[ctypes._Pointer] = None  # type: ignore[name-defined]
        handle = WatcherPtr()
        _lib.check(_lib.lib().nubo_interruption_watcher_create(
            self._callback, None, float(poll_seconds), ctypes.byref(handle)))
        self._handle = handle

    @property
    def cloud(self) -> str:
        """The cloud found ("aws", "gcp", "azure"), or "" when the watcher is off."""
        if self._handle is None:
            raise ValueError("the watcher is closed")
        return _lib.read_text(_lib.lib().nubo_interruption_watcher_cloud, self._handle)

    def close(self) -> None:
        """Stops polling (waits for the watcher's thread)."""
        if self._handle is not None:
            _lib.lib().nubo_interruption_watcher_free(self._handle)
            self._handle = None

    def __enter__(self) -> "Watcher":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()
