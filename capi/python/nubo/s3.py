"""Files and trees to and from S3-compatible object storage: nubo.s3.copy() (docs/s3.md).

    >>> from nubo import s3
    >>> s = s3.copy("ckpt/", "s3://my-bucket/run1/")        # each file one object
    >>> s3.copy("s3://my-bucket/run1/ckpt/", "/scratch")    # and back
    >>> s.files, s.bytes_sent, s.bytes_resumed

Resumable after any interruption (run the same copy again; Ctrl-C cancels within a second,
keeping an upload's parts only with keep_partial) and verified end to end. Keys,
region and endpoint are read as the AWS CLI reads them (AWS_* variables, ~/.aws profiles).
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Iterable, Optional, Union

from . import _lib
from ._abi import nubo_s3_copy_options, nubo_s3_copy_summary
from .transfer import ProgressFn, _call, _path, _patterns

StrPath = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class CopySummary:
    files: int
    bytes: int
    bytes_sent: int     # moved this time
    bytes_resumed: int  # verified by an interrupted attempt, not moved again
    parts: int
    seconds: float


def copy(source: StrPath, destination: StrPath, *, streams: int = 4, part_size: int = 0,
         keep_partial: bool = False, sync: bool = True, profile: Optional[str] = None,
         server_side_encryption: Optional[str] = None, kms_key_id: Optional[str] = None,
         exclude: Iterable[str] = (), include: Iterable[str] = (),
         progress: Optional[ProgressFn] = None, rate: float = 0,
         key_file: Optional[StrPath] = None) -> CopySummary:
    """Copies a file or a tree between a local path and s3://BUCKET/KEY (either way round).
    rate: bytes per second over every part in flight (0: unlimited).
    key_file: uploads are encrypted with this key (nubo.keygen makes one); downloads
    of encrypted objects need it.
    Raises NuboError (INVALID_ARGUMENT: URLs, options, missing or refused credentials;
    NOT_FOUND: a bucket or object; UNAVAILABLE: unreachable, call again to resume; CORRUPT;
    CANCELLED)."""
    lib = _lib.lib()
    o = nubo_s3_copy_options()
    _lib.check(lib.nubo_s3_copy_options_init(ctypes.byref(o), ctypes.sizeof(o)))
    o.streams, o.part_size, o.keep_partial, o.sync = streams, part_size, int(keep_partial), int(sync)
    o.profile = profile.encode() if profile else None
    o.server_side_encryption = server_side_encryption.encode() if server_side_encryption else None
    o.kms_key_id = kms_key_id.encode() if kms_key_id else None
    excluded, o.exclude_count = _patterns(exclude)
    included, o.include_count = _patterns(include)
    o.exclude, o.include = excluded, included
    o.rate = rate
    o.key_file = _path(key_file) if key_file else None
    call = _call(progress)
    o.progress = call.c
    source_bytes, destination_bytes = _path(source), _path(destination)
    s = nubo_s3_copy_summary()
    call.run(lambda: lib.nubo_s3_copy(source_bytes, destination_bytes, ctypes.byref(o),
                                      ctypes.byref(s)))
    return CopySummary(files=s.files, bytes=s.bytes, bytes_sent=s.bytes_sent,
                       bytes_resumed=s.bytes_resumed, parts=s.parts, seconds=s.seconds)
