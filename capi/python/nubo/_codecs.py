"""nubo_codec in Python, and the per-codec chunk counts of a C summary."""

from __future__ import annotations

from typing import Any

from ._enum import OpenIntEnum


class Codec(OpenIntEnum):
    """nubo_codec."""

    AUTO = 0
    NONE = 1
    LZ4 = 2
    ZSTD = 3
    ZERO = 4  # how a chunk of zeros is stored (its length alone): counted, never chosen
    FLOAT = 5  # zstd over the byte planes of bf16/fp16/fp32 values: checkpoints, weights


def chunk_counts(slots: Any) -> dict[Codec, int]:
    """A C summary's chunks_by_codec (indexed by nubo_codec) as {Codec.ZSTD: n, ...}, with
    every way a chunk can be stored (not AUTO, a choice)."""
    return {codec: int(slots[codec]) for codec in Codec if codec != Codec.AUTO}
