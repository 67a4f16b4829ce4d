"""Long C calls with a progress callback, which Ctrl-C cancels as the command-line tools do.

ctypes releases the GIL during a call, but Python runs signal handlers only on the main thread,
between bytecodes: a long call made there would hold a KeyboardInterrupt until it returned, and
one raised inside a ctypes callback would be printed and dropped. So the call runs on a helper
thread while the main thread waits. An exception that reaches the waiting thread (Ctrl-C's
KeyboardInterrupt, or whatever a SIGTERM handler raises) makes the next progress callback answer
"cancel": the call stops as a cancelled call does, leaving its resumable state (a pack's
journal, a send's partial files, a trainer's checkpoint), and the exception is re-raised.
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time
from typing import Any, Callable, Generic, Optional, TypeVar

from . import _lib
from .errors import Status

P = TypeVar("P")

# What a user interrupts a long call with: held back while its helper thread starts.
_HELD = {signal.SIGINT, signal.SIGTERM}


class Fraction:
    """A progress value's share done: bytes_done / bytes_total (1.0 when there is nothing)."""

    bytes_done: int
    bytes_total: int

    @property
    def fraction(self) -> float:
        return self.bytes_done / self.bytes_total if self.bytes_total else 1.0


class ProgressCall(Generic[P]):
    """One call's progress callback. prototype is the ctypes CFUNCTYPE of the C callback,
    convert turns what the C pointer points at into the Python progress value, and fn (None:
    none) receives it and returns False to cancel. fn's first exception cancels the call and is
    re-raised from run()."""

    def __init__(self, prototype: Any, convert: Callable[[Any], P],
                 fn: Optional[Callable[[P], Any]]) -> None:
        self._fn, self._convert = fn, convert
        self._error: Optional[BaseException] = None
        self._cancelled = False  # a plain flag: set from the signal path, where locks are unsafe
        # Always a callback, even without fn: it is how a Ctrl-C reaches the C call.
        self.c = prototype(self._call)

    def _call(self, p: "ctypes._Pointer[Any]", _user: Optional[int]) -> int:
        if self._cancelled:
            return 0
        if self._fn is None:
            return 1
        try:
            return 0 if self._fn(self._convert(p.contents)) is False else 1
        except BaseException as e:  # noqa: BLE001 - re-raised by run() after the call
            self._error = e
            self._cancelled = True
            return 0

    def run(self, call: Callable[[], int]) -> None:
        """Makes the C call (a function returning its nubo_status) and raises what it ended
        with: the interruption, fn's exception, or the status as NuboError."""
        interrupted: Optional[BaseException] = None
        outcome: list[BaseException] = []  # the call's own failure, if any
        done: list[bool] = []  # appended by the worker as its last act; no lock to leak

        def work() -> None:
            try:
                status = call()
                if status != Status.OK:
                    # nubo's message is per thread: read it on the thread that made the call.
                    outcome.append(_lib.error(status))
            except BaseException as e:  # noqa: BLE001 - re-raised on the caller's thread
                outcome.append(e)
            finally:
                done.append(True)

        if threading.current_thread() is not threading.main_thread():
            work()  # no signal is delivered here: nothing to wait for
        else:
            worker = threading.Thread(target=work, name="nubo-call", daemon=True)
            # Ctrl-C and SIGTERM wait while the thread starts: an exception raised inside
            # Thread.start could leave the call running with nobody waiting for it. The thread
            # keeps them blocked (it inherits the mask), so they reach this thread, the one
            # that handles them, once unblocked inside the loop below.
            held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
            worker.start()
            unblocked = False
            # Polls with sleeps rather than waiting on a lock: an exception raised by a signal
            # handler inside threading's lock code can leave a lock held (or, in Thread.join, a
            # running thread marked stopped: Python 3.11, bpo-45274), while a sleep holds no
            # state. The first polls are short, so a quick call returns at once.
            pause = 0.0005
            while not done:
                try:
                    if not unblocked:
                        unblocked = True
                        signal.pthread_sigmask(signal.SIG_SETMASK, held)
                    time.sleep(pause)
                except BaseException as e:  # noqa: BLE001 - re-raised once the call has stopped
                    interrupted = interrupted or e
                    self._cancelled = True
                pause = min(pause * 2, 0.02)
            worker.join()
        if interrupted is not None:
            raise interrupted
        if self._error is not None:
            raise self._error
        if outcome:
            raise outcome[0]
