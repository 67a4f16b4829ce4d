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
    accepted ones, so it is passed through unchanged.
    """

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = Status(status)
        self.message = message

    def __repr__(self) -> str:
        return f"NuboError({self.status.name}, {self.message!r})"
