"""nubo: find, use and price the GPUs of cloud machines.

Python bindings over nubo's stable C ABI (libnubo_c.so) through ctypes. The library is looked
up, on first use, in this order: $NUBO_LIBRARY; the copy bundled at install time (nubo/_libs/);
run from a source checkout, the checkout's build/lib; the system (the linker cache,
LD_LIBRARY_PATH, /usr/local/lib).

    >>> import nubo
    >>> report = nubo.discover(sim_devices="8xA100-SXM4-80GB")
    >>> [str(d) for d in report.select(count=4, min_cc=(8, 0))]

A program started by a launcher (nubo-run, torchrun, srun, mpirun) joins its job with one call
and reduces from its own loop:

    >>> w = nubo.init()
    >>> w.all_reduce(grad, "avg")
"""

from __future__ import annotations

from . import _lib, cost
from . import train  # nubo.train.Trainer (docs/train.md)
from . import net  # nubo.net.send(), nubo.net.Server (docs/net.md)
from . import s3  # nubo.s3.copy(): nubo.copy() under its S3 name
from . import interruption  # nubo.interruption.Watcher: spot notices (docs/train.md)
from . import units  # nubo.units: sizes and durations as every tool reads them (docs/units.md)
from .devices import (Backend, Device, DeviceReport, Diagnosis, DriverInfo, HostCpu, Link,
                      LinkKind, Nic, Severity, discover)
from .health import health, preflight  # GPU health and the preflight (docs/preflight.md)
from .errors import (InvalidArgumentError, IoError, NotFoundError, NuboError, OutOfMemoryError,
                     Status, TimeoutError, UnsupportedError)
from .parallel import Buffer, DType, Event, NativeHandles, Pending, ReduceOp, Team, Worker
from .optimizer import (ShardedOptimizer, sharded_memory)  # ZeRO stages, mixed precision
from .process import init, is_initialized, shutdown, worker
from .schedule import Schedule, ScheduledJob, schedule  # a queue of jobs (docs/schedule.md)
from .stores import (CopySummary, SyncSummary, Symlinks, access_policy, copy,  # object storage
                     is_store_url, sync)  # (docs/s3.md)
from .transfer import (Archive, Codec, Entry, EntryKind, Progress, Summary, archive_difference,
                       codecs, keygen, list_archive, pack, unpack, verify)

__version__ = "0.1.0"  # the version of nubo this package binds; pyproject.toml says the same

__all__ = [
    "Backend", "Device", "DeviceReport", "Diagnosis", "DriverInfo", "HostCpu", "Link",
    "LinkKind", "Nic", "NuboError", "InvalidArgumentError", "IoError", "NotFoundError",
    "OutOfMemoryError", "TimeoutError", "UnsupportedError", "Severity", "Status", "abi_version", "check_environment", "discover",
    "library_path", "version",
    "Archive", "Codec", "Entry", "EntryKind", "Progress", "Summary", "archive_difference", "codecs",
    "keygen",
    "list_archive",
    "pack", "unpack", "verify",
    "Buffer", "DType", "Event", "NativeHandles", "Pending", "ReduceOp", "Team", "Worker",
    "ShardedOptimizer", "sharded_memory",
    "init", "is_initialized", "shutdown", "worker",
    "CopySummary", "SyncSummary", "Symlinks", "access_policy", "copy", "is_store_url", "sync",
    "health", "preflight",
    "Schedule", "ScheduledJob", "schedule",
    "cost", "interruption", "net", "s3", "train", "units",
]


def version() -> str:
    """The version of the loaded libnubo_c.so, "MAJOR.MINOR.PATCH"."""
    return _lib.text(_lib.lib().nubo_version())


def check_environment() -> None:
    """Parses every environment variable nubo reads (docs/env.md) that is set; raises NuboError
    (Status.INVALID_ARGUMENT) naming the first malformed one. Call it first, so that a typo stops
    the program before any work."""
    _lib.check(_lib.lib().nubo_check_environment())


def abi_version() -> int:
    """NUBO_ABI_VERSION of the loaded libnubo_c.so."""
    return int(_lib.lib().nubo_abi_version())


def library_path() -> str:
    """Where libnubo_c.so was loaded from."""
    return _lib.library_path()
