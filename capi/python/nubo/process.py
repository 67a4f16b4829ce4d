"""This process's place in a job, for a program that keeps its own loop: nubo.init() joins the
job that started the process (nubo-run, torchrun, srun, mpirun, SkyPilot; alone without one)
and returns its worker; nubo.shutdown() leaves it. As torch.distributed's init_process_group()
or Horovod's hvd.init(), it is called once, from any thread, and the worker's collectives are
then called from the program's own threads, the main thread included.

    >>> import nubo, numpy as np
    >>> w = nubo.init()
    >>> grad = np.ones(1024, dtype=np.float32)
    >>> w.all_reduce(grad, "avg")                 # in place, from the main thread

At interpreter exit the job is left as shutdown() leaves it, so a program need not call it.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any, Optional

from .errors import NuboError, Status
from .parallel import Team, Worker

_lock = threading.Lock()
_team: Optional[Team] = None
_worker: Optional[Worker] = None
_at_exit_registered = False


def init(**options: Any) -> Worker:
    """Joins the job that started this process, with one worker (the GPU of its local rank, or
    the CPU), and returns it; called again, returns the same worker. Options as Team.join():
    timeout (seconds a collective waits for the other ranks; default NUBO_TIMEOUT, else 60),
    cpu_bind (pin the calling thread and the worker's GEMM threads to the worker's cores), or
    any field of nubo_team_options."""
    global _team, _worker, _at_exit_registered
    with _lock:
        if _worker is not None:
            return _worker
        team = Team.join(**options)
        try:
            worker = team.worker()
        except BaseException:
            team.close()
            raise
        _team, _worker = team, worker
        if not _at_exit_registered:
            atexit.register(shutdown)
            _at_exit_registered = True
        return worker


def is_initialized() -> bool:
    """True between init() and shutdown()."""
    return _worker is not None


def worker() -> Worker:
    """The worker init() returned; a NuboError when init() was not called."""
    w = _worker
    if w is None:
        raise NuboError(Status.INVALID_ARGUMENT, "nubo.init() has not been called in this "
                        "process (or nubo.shutdown() was)")
    return w


def shutdown() -> None:
    """Leaves the job: waits (up to the timeout) for the other processes to reach their end,
    then frees the worker, whose later calls raise a NuboError. Does nothing when not joined."""
    global _team, _worker
    with _lock:
        team, _team, _worker = _team, None, None
    if team is not None:
        team.close()


__all__ = ["init", "is_initialized", "shutdown", "worker"]
