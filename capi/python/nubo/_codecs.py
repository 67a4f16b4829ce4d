"""The per-codec chunk counts of a C summary, by Codec (nubo/_enums.py, generated)."""

from __future__ import annotations

from typing import Any

from ._enums import Codec


def chunk_counts(slots: Any) -> dict[Codec, int]:
    """A C summary's chunks_by_codec (indexed by nubo_codec) as {Codec.ZSTD: n, ...}, with
    every way a chunk can be stored (not AUTO, a choice)."""
    return {codec: int(slots[codec]) for codec in Codec if codec != Codec.AUTO}
