"""Compressed, resumable archives: nubo.pack(), unpack(), verify(), and Archive for listing and
random access (docs/transfer.md).

    >>> import nubo
    >>> nubo.pack(["data/"], "data.nubo", codec="zstd", progress=lambda p: True)
    >>> with nubo.Archive("data.nubo") as a:
    ...     header = a.read("data/train.bin", 0, 4096)

A progress callable receives a Progress and returns True to go on, False to cancel: the call then
raises NuboError with status CANCELLED, and what was done stays resumable. An exception raised
by the callable cancels too, and is re-raised from the call. Ctrl-C cancels within a second
the same way, with or without a callable, and the KeyboardInterrupt is re-raised.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, c_char_p, c_size_t
from typing import Any, Callable, Iterable, Iterator, Optional, Union

from . import _lib, _results
from ._abi import (nubo_codec_info, nubo_transfer_archive, nubo_transfer_archive_entry_info,
                   nubo_transfer_pack_options, nubo_transfer_progress,
                   nubo_transfer_progress_callback, nubo_transfer_summary,
                   nubo_transfer_unpack_options, nubo_transfer_verify_options)
from ._codecs import Codec
from ._enums import EntryKind as EntryKind  # re-exported
from ._results import Entry
from ._options import filled
from ._progress import Fraction, ProgressCall
from .errors import NuboError, Status

StrPath = Union[str, "os.PathLike[str]"]


# ---- Callbacks (the structs are _abi.py's, generated from nubo_transfer.h) ---------------

PROGRESS_CALLBACK = nubo_transfer_progress_callback


def _patterns(patterns: Iterable[str]) -> "tuple[ctypes.Array[c_char_p], int]":
    """A C array of patterns for the exclude/include fields (kept alive by the caller)."""
    encoded = [p.encode() for p in patterns]
    return (c_char_p * max(len(encoded), 1))(*encoded), len(encoded)


ArchivePtr = POINTER(nubo_transfer_archive)


# ---- Python side ---------------------------------------------------------------------------


class Progress(_results.Progress, Fraction):
    """What a progress callable sees (nubo_transfer_progress), and its fraction done."""


class Summary(_results.Summary):
    """What pack, unpack or verify did (nubo_transfer_summary)."""

    @property
    def ratio(self) -> float:
        return self.bytes_stored / self.bytes if self.bytes else 0.0


ProgressFn = Callable[[Progress], bool]


def _progress(c: nubo_transfer_progress) -> Progress:
    return Progress._from_c(c)


def _call(progress: Optional[ProgressFn]) -> ProgressCall[Progress]:
    return ProgressCall(PROGRESS_CALLBACK, _progress, progress)


_path = _lib.path_bytes
_optional_path = _lib.optional_path_bytes


def _summary(s: nubo_transfer_summary) -> Summary:
    return Summary._from_c(s)


def codecs() -> list[_results.CodecInfo]:
    """The codecs to choose from, in the order they are offered, with their levels and help
    (nubo-xfer pack --help prints the same table)."""
    c = _lib.lib()
    return _lib.records(_results.CodecInfo, nubo_codec_info,
                        lambda _: c.nubo_transfer_codec_count(),
                        lambda _, i, out: c.nubo_transfer_codec_info(i, out), None)


def _codec(codec: Union[str, Codec]) -> int:
    """A codec given by name ("zstd", any case) or value, as the library reads names."""
    if isinstance(codec, str):
        out = ctypes.c_int()
        _lib.check(_lib.lib().nubo_transfer_codec_from_name(codec.encode("utf-8"),
                                                            ctypes.byref(out)))
        return out.value
    return int(codec)


def _pack_options(codec: Union[str, Codec, None] = None, **values: Any) -> Any:
    """nubo_transfer_pack_options from pack()'s arguments (None: the library's default)."""
    return filled(nubo_transfer_pack_options, "nubo_transfer_pack_options_init",
                  codec=None if codec is None else _codec(codec), **values)


def _sources(sources: Union[StrPath, Iterable[StrPath]]) -> "tuple[ctypes.Array[c_char_p], int]":
    if isinstance(sources, (str, bytes, os.PathLike)):
        sources = [sources]  # type: ignore[list-item]
    encoded = [_path(s) for s in sources]  # type: ignore[union-attr]
    return (c_char_p * max(len(encoded), 1))(*encoded), len(encoded)


def pack(sources: Union[StrPath, Iterable[StrPath]], archive: StrPath, *,
         codec: Union[str, Codec, None] = None, level: Optional[int] = None,
         chunk_size: Optional[int] = None, threads: Optional[int] = None,
         memory_limit: Optional[int] = None, target_rate: Optional[float] = None,
         resume: Optional[bool] = None, sync: Optional[bool] = None,
         progress: Optional[ProgressFn] = None, exclude: Iterable[str] = (),
         include: Iterable[str] = (), key_file: Optional[StrPath] = None,
         keep_partial: Optional[bool] = None, skip_unchanged: Optional[bool] = None) -> Summary:
    """Packs files and directories into `archive`; resumes an interrupted pack of the same
    sources. An option left None keeps the library's default (docs/transfer.md): zstd at its
    default level, 4 MiB chunks, every core, 64 MiB in flight, resume and sync on.
    exclude/include: rsync's filter patterns (an excluded entry is kept when an include
    pattern matches it). key_file: encrypt with that key (keygen makes one),
    or "kms:KEY" for a key from AWS KMS (then readers need none).
    keep_partial: packing to a store, a cancel keeps the upload for a rerun (default: aborts
    it). skip_unchanged: an archive already there that is what this pack would make is kept,
    and the summary says up_to_date (default: it is replaced).
    Raises NuboError (CANCELLED when progress returned False)."""
    options = _pack_options(codec, level=level, chunk_size=chunk_size, threads=threads,
                            memory_limit=memory_limit, target_rate=target_rate, resume=resume,
                            sync=sync, exclude=exclude, include=include, key_file=key_file,
                            keep_partial=keep_partial, skip_unchanged=skip_unchanged)
    call = _call(progress)
    options.progress = call.c
    array, count = _sources(sources)
    target = _path(archive)
    s = nubo_transfer_summary()
    call.run(lambda: _lib.lib().nubo_transfer_pack(array, count, target, ctypes.byref(options),
                                                   ctypes.byref(s)))
    return _summary(s)


def archive_difference(archive: StrPath, sources: Union[StrPath, Iterable[StrPath]], *,
                       chunk_size: Optional[int] = None, exclude: Iterable[str] = (),
                       include: Iterable[str] = (), key_file: Optional[StrPath] = None) -> str:
    """Whether `archive` is what pack(sources, ...) would make of them now, as rsync's quick
    check decides (kinds, sizes, modification times, modes, link targets; the chunk size; the
    encryption): "" when it is, else the first difference, e.g. "'src/a.txt': its size
    changed". Raises NuboError (NOT_FOUND: no archive there; CORRUPT: a damaged one)."""
    options = _pack_options(chunk_size=chunk_size, exclude=exclude, include=include,
                            key_file=key_file)
    array, count = _sources(sources)
    return _lib.read_text(_lib.lib().nubo_transfer_archive_difference, _path(archive), array,
                          count, ctypes.byref(options))


def unpack(archive: StrPath, directory: StrPath, *, threads: Optional[int] = None,
           memory_limit: Optional[int] = None, resume: Optional[bool] = None,
           sync: Optional[bool] = None, progress: Optional[ProgressFn] = None,
           preserve_special_modes: Optional[bool] = None,
           key_file: Optional[StrPath] = None) -> Summary:
    """Unpacks `archive` into `directory`; resumes an interrupted unpack. An option left None
    keeps the library's default (every core, 64 MiB in flight, resume and sync on). setuid,
    setgid and sticky bits are dropped unless preserve_special_modes. key_file: an encrypted
    archive's key."""
    lib = _lib.lib()
    o = filled(nubo_transfer_unpack_options, "nubo_transfer_unpack_options_init",
               threads=threads, memory_limit=memory_limit, resume=resume, sync=sync,
               preserve_special_modes=preserve_special_modes, key_file=key_file)
    call = _call(progress)
    o.progress = call.c
    source, target = _path(archive), _path(directory)
    s = nubo_transfer_summary()
    call.run(lambda: lib.nubo_transfer_unpack(source, target, ctypes.byref(o), ctypes.byref(s)))
    return _summary(s)


def verify(archive: StrPath, *, threads: Optional[int] = None,
           memory_limit: Optional[int] = None, progress: Optional[ProgressFn] = None,
           key_file: Optional[StrPath] = None) -> Summary:
    """Checks every checksum of `archive`; raises NuboError (CORRUPT) naming the fault. An
    option left None keeps the library's default. key_file: an encrypted archive's key."""
    lib = _lib.lib()
    o = filled(nubo_transfer_verify_options, "nubo_transfer_verify_options_init",
               threads=threads, memory_limit=memory_limit, key_file=key_file)
    call = _call(progress)
    o.progress = call.c
    s = nubo_transfer_summary()
    source = _path(archive)
    call.run(lambda: lib.nubo_transfer_verify(source, ctypes.byref(o), ctypes.byref(s)))
    return _summary(s)


class Archive(_lib.Handle):
    """An open archive: its entries, and any byte range of any file (read verified)."""

    _what = "archive"

    def __init__(self, path: StrPath, key_file: Optional[StrPath] = None) -> None:
        self._lib = _lib.lib()
        handle = ArchivePtr()
        _lib.check(self._lib.nubo_transfer_archive_open_with_key(
            _path(path), _optional_path(key_file), ctypes.byref(handle)))
        self._own(handle, self._lib.nubo_transfer_archive_free)
        self.entries = _lib.records(Entry, nubo_transfer_archive_entry_info,
                                    self._lib.nubo_transfer_archive_entry_count,
                                    self._lib.nubo_transfer_archive_entry, handle)
        self._by_path = {e.path: e for e in self.entries}

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def entry(self, path: str) -> Entry:
        try:
            return self._by_path[path]
        except KeyError:
            raise NuboError(Status.NOT_FOUND, f"no entry {path!r} in the archive") from None

    def read(self, path: str, offset: int = 0, size: Optional[int] = None) -> bytes:
        """Bytes [offset, offset+size) of the file at `path` (to its end when size is None)."""
        handle = self._h()
        e = self.entry(path)
        available = max(0, e.size - offset)
        n = available if size is None else min(size, available)
        buf = ctypes.create_string_buffer(max(n, 1))
        got = c_size_t(0)
        _lib.check(self._lib.nubo_transfer_archive_read(handle, path.encode(), offset, buf, n,
                                                        ctypes.byref(got)))
        return buf.raw[:got.value]


def list_archive(path: StrPath, key_file: Optional[StrPath] = None) -> list[Entry]:
    """The entries of an archive, from its index (an encrypted one's need its key_file)."""
    with Archive(path, key_file) as a:
        return list(a.entries)


def keygen(path: StrPath) -> None:
    """Writes a fresh random key file (64 hexadecimal digits, mode 0600) for key_file; never
    replaces an existing file (NuboError INVALID_ARGUMENT)."""
    _lib.check(_lib.lib().nubo_transfer_keygen(_path(path)))
