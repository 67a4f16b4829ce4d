"""Sizes, rates and durations, read as every nubo tool reads them (docs/units.md), through the
C ABI (nubo_units.h), so that Python, C, C++ and the command lines give the same answers.

    >>> from nubo import units
    >>> units.parse_bytes("4M"), units.parse_bytes("4MB")
    (4194304, 4000000)
    >>> units.parse_duration("1h30m")
    5400.0

K, M, G, T, P (and Ki.., KiB..) are powers of 1024, KB, MB, GB.. powers of 1000. A bare
number is bytes, or seconds. Anything else raises NuboError (also a ValueError) naming `what`.
"""

from __future__ import annotations

import ctypes
from ctypes import c_double, c_uint64

from . import _lib


def _text(value: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str such as '4M' or '90s', not {type(value).__name__}")
    return value.encode()


def parse_bytes(text: str, what: str = "size") -> int:
    """"4M" -> 4194304, "4MB" -> 4000000, "512" -> 512."""
    out = c_uint64()
    _lib.check(_lib.lib().nubo_units_parse_bytes(_text(text, what), what.encode(),
                                                 ctypes.byref(out)))
    return out.value


def parse_rate(text: str, what: str = "rate") -> float:
    """Bytes per second: "100M", "1.5GB/s"."""
    out = c_double()
    _lib.check(_lib.lib().nubo_units_parse_rate(_text(text, what), what.encode(),
                                                ctypes.byref(out)))
    return out.value


def parse_duration(text: str, what: str = "duration") -> float:
    """Seconds: "90", "90s", "500ms", "10m", "6h", "1d", "1w", "1h30m"."""
    out = c_double()
    _lib.check(_lib.lib().nubo_units_parse_duration(_text(text, what), what.encode(),
                                                    ctypes.byref(out)))
    return out.value


def format_bytes(size: float, decimals: int = 1) -> str:
    """"80.0 GiB", "512 B"."""
    return _lib.read_text(_lib.lib().nubo_units_format_bytes, float(size), decimals)


def format_duration(seconds: float) -> str:
    """"420 ms", "45 s", "30 min", "10.0 h"."""
    return _lib.read_text(_lib.lib().nubo_units_format_duration, float(seconds))
