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
from ctypes import c_double, c_int, c_uint64
from typing import Union

from . import _lib
from ._enum import OpenIntEnum


class DType(OpenIntEnum):
    """nubo_dtype, the one element type of the ABI: buffers hold F32 to I64; TF32 is F32
    storage multiplied in TensorFloat-32, a compute precision the cost model prices."""

    F32 = 0
    F16 = 1
    BF16 = 2
    I32 = 3
    I64 = 4
    TF32 = 5

    def __str__(self) -> str:
        return _lib.lib().nubo_units_dtype_name(int(self)).decode()


def parse_dtype(value: Union[DType, int, str], what: str = "dtype") -> DType:
    """A DType from itself, its value, or a name as users of this field spell it ("f32",
    "fp32", "float32", "half", "bfloat16", "int64", "tf32"; any case), read by the library."""
    if isinstance(value, str):
        out = c_int()
        _lib.check(_lib.lib().nubo_units_parse_dtype(_text(value, what), ctypes.byref(out)))
        return DType(out.value)
    return DType(value)


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


def parse_count(text: str, what: str = "count") -> float:
    """Model sizes and token counts: "7B" -> 7e9, "70M", "1.5T", "2e9"."""
    out = c_double()
    _lib.check(_lib.lib().nubo_units_parse_count(_text(text, what), what.encode(),
                                                 ctypes.byref(out)))
    return out.value


def format_bytes(size: float, decimals: int = 1) -> str:
    """"80.0 GiB", "512 B"."""
    return _lib.read_text(_lib.lib().nubo_units_format_bytes, float(size), decimals)


def format_duration(seconds: float) -> str:
    """"420 ms", "45 s", "30 min", "10.0 h"."""
    return _lib.read_text(_lib.lib().nubo_units_format_duration, float(seconds))
