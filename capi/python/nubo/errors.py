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


class _InvalidArgument(NuboError, ValueError):
    pass


class _NotFound(NuboError, FileNotFoundError):
    pass


class _IO(NuboError, OSError):
    pass


class _Timeout(NuboError, TimeoutError):
    pass


class _OutOfMemory(NuboError, MemoryError):
    pass


class _Unsupported(NuboError, NotImplementedError):
    pass


_BY_STATUS = {
    Status.INVALID_ARGUMENT: _InvalidArgument,
    Status.NOT_FOUND: _NotFound,
    Status.IO: _IO,
    Status.TIMEOUT: _Timeout,
    Status.OUT_OF_MEMORY: _OutOfMemory,
    Status.UNSUPPORTED: _Unsupported,
}
