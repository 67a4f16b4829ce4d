"""nubo's one exception type and the status codes it carries."""

from __future__ import annotations

from ._enum import OpenIntEnum


class Status(OpenIntEnum):
    """nubo_status of nubo.h (one to one with the C++ nubo::Errc); the values are stable."""

    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    UNAVAILABLE = 3
    IO = 4
    CORRUPT = 5
    TIMEOUT = 6
    CANCELLED = 7
    UNSUPPORTED = 8
    OUT_OF_MEMORY = 9
    INTERNAL = 10


class NuboError(Exception):
    """A failed nubo call: `status` says what kind of failure, the message what to do about it.

    The message is the library's own (nubo_last_error()), which names the bad value and the
    accepted ones, so it is passed through unchanged. A NuboError is also the builtin exception
    Python code already catches for its kind: ValueError (INVALID_ARGUMENT), FileNotFoundError
    (NOT_FOUND), OSError (IO), TimeoutError (TIMEOUT), MemoryError (OUT_OF_MEMORY) and
    NotImplementedError (UNSUPPORTED).
    """

    def __new__(cls, status: Status, message: str = "") -> "NuboError":
        if cls is NuboError:
            cls = _BY_STATUS.get(Status(status), NuboError)
        return super().__new__(cls)  # type: ignore[misc]

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = Status(status)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple:
        return NuboError, (self.status, self.message)

    def __repr__(self) -> str:
        return f"NuboError({self.status.name}, {self.message!r})"


# One subclass per status that has a builtin counterpart, so that `except ValueError` catches an
# invalid argument. They are public and live in `nubo` (a traceback says
# "nubo.InvalidArgumentError: <message>"); `except nubo.NuboError` catches them all.
class InvalidArgumentError(NuboError, ValueError):
    pass


class NotFoundError(NuboError, FileNotFoundError):
    pass


class IoError(NuboError, OSError):
    pass


class TimeoutError(NuboError, TimeoutError):  # noqa: A001 - nubo.TimeoutError, as asyncio's
    pass


class OutOfMemoryError(NuboError, MemoryError):
    pass


class UnsupportedError(NuboError, NotImplementedError):
    pass


_BY_STATUS = {
    Status.INVALID_ARGUMENT: InvalidArgumentError,
    Status.NOT_FOUND: NotFoundError,
    Status.IO: IoError,
    Status.TIMEOUT: TimeoutError,
    Status.OUT_OF_MEMORY: OutOfMemoryError,
    Status.UNSUPPORTED: UnsupportedError,
}

for _kind in (NuboError, *_BY_STATUS.values()):
    _kind.__module__ = "nubo"
