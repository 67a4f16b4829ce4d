"""Files and trees to and from object storage: nubo.copy() (docs/s3.md).

    >>> import nubo
    >>> s = nubo.copy("ckpt/", "s3://my-bucket/run1/")        # each file one object
    >>> nubo.copy("gs://my-bucket/run1/ckpt/", "/scratch")     # Google Cloud Storage
    >>> nubo.copy("ckpt/", "file:///mnt/shared/run1/")         # a shared file system
    >>> s.files, s.bytes_sent, s.bytes_resumed

The stores, by URL: s3://BUCKET/KEY (keys, region and endpoint read as the AWS CLI reads them:
AWS_* variables, ~/.aws profiles), gs://BUCKET/KEY (an HMAC key: GS_ACCESS_KEY_ID and
GS_SECRET_ACCESS_KEY, or the boto file), file:///PATH (NFS, Lustre, EFS mounted here). Resumable
after any interruption (run the same copy again; Ctrl-C cancels within a second, keeping an
upload's parts only with keep_partial) and verified end to end.
"""

from __future__ import annotations

import ctypes
import os
from typing import Iterable, Optional, Union

from . import _lib
from ._results import CopySummary
from ._abi import nubo_transfer_copy_options, nubo_transfer_copy_summary, nubo_transfer_s3_options
from .transfer import ProgressFn, _call, _path, _patterns

StrPath = Union[str, "os.PathLike[str]"]


def _text(value: Optional[str]) -> Optional[bytes]:
    return value.encode() if value else None


def copy(source: StrPath, destination: StrPath, *, streams: int = 4, part_size: int = 0,
         keep_partial: bool = False, sync: bool = True,
         exclude: Iterable[str] = (), include: Iterable[str] = (),
         progress: Optional[ProgressFn] = None, rate: float = 0,
         key_file: Optional[StrPath] = None, journal_dir: Optional[StrPath] = None,
         profile: Optional[str] = None, server_side_encryption: Optional[str] = None,
         kms_key_id: Optional[str] = None) -> CopySummary:
    """Copies a file or a tree between a local path and a store URL (either way round).
    rate: bytes per second over every part in flight (0: unlimited).
    key_file: uploads are encrypted with this key (nubo.keygen makes one); downloads
    of encrypted objects need it.
    profile, server_side_encryption ("AES256" or "aws:kms"), kms_key_id: for s3:// only.
    Raises NuboError (INVALID_ARGUMENT: URLs, options, missing or refused credentials;
    NOT_FOUND: a bucket, directory or object; UNAVAILABLE: unreachable, call again to resume;
    CORRUPT; CANCELLED)."""
    lib = _lib.lib()
    o = nubo_transfer_copy_options()
    _lib.check(lib.nubo_transfer_copy_options_init(ctypes.byref(o), ctypes.sizeof(o)))
    s3 = nubo_transfer_s3_options()
    _lib.check(lib.nubo_transfer_s3_options_init(ctypes.byref(s3), ctypes.sizeof(s3)))
    s3.profile = _text(profile)
    s3.server_side_encryption = _text(server_side_encryption)
    s3.kms_key_id = _text(kms_key_id)
    o.s3 = ctypes.pointer(s3)
    o.streams, o.part_size, o.keep_partial, o.sync = streams, part_size, int(keep_partial), int(sync)
    excluded, o.exclude_count = _patterns(exclude)
    included, o.include_count = _patterns(include)
    o.exclude, o.include = excluded, included
    o.rate = rate
    o.key_file = _path(key_file) if key_file else None
    o.journal_dir = _path(journal_dir) if journal_dir else None
    call = _call(progress)
    o.progress = call.c
    source_bytes, destination_bytes = _path(source), _path(destination)
    s = nubo_transfer_copy_summary()
    call.run(lambda: lib.nubo_transfer_copy(source_bytes, destination_bytes, ctypes.byref(o),
                                            ctypes.byref(s)))
    return CopySummary._from_c(s)


def is_store_url(text: StrPath) -> bool:
    """Whether `text` names a store (s3://, gs://, file://) rather than a local path."""
    return bool(_lib.lib().nubo_transfer_is_store_url(_path(text)))
