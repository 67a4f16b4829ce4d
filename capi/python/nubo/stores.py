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
from typing import Callable, Iterable, Optional, Union

from . import _lib
from ._enums import Symlinks
from ._results import CopySummary, SyncSummary
from ._abi import (nubo_transfer_change_callback, nubo_transfer_copy_options,
                   nubo_transfer_copy_summary,
                   nubo_transfer_s3_options, nubo_transfer_sync_options,
                   nubo_transfer_sync_summary)
from ._options import filled
from .transfer import ProgressFn, _call, _path, _patterns

StrPath = Union[str, "os.PathLike[str]"]


def copy(source: StrPath, destination: StrPath, *, streams: Optional[int] = None,
         part_size: Optional[int] = None, keep_partial: Optional[bool] = None,
         sync: Optional[bool] = None, exclude: Iterable[str] = (), include: Iterable[str] = (),
         progress: Optional[ProgressFn] = None, rate: Optional[float] = None,
         key_file: Optional[StrPath] = None, journal_dir: Optional[StrPath] = None,
         profile: Optional[str] = None, server_side_encryption: Optional[str] = None,
         kms_key_id: Optional[str] = None, source_profile: Optional[str] = None,
         symlinks: Union[str, Symlinks, None] = None,
         follow_outside: Optional[bool] = None) -> CopySummary:
    """Copies a file or a tree between a local path and a store URL (either way round), or
    between two stores (copied by the store itself within one account and endpoint, streamed
    otherwise; source_profile names the source's AWS profile, profile the destination's). An
    option left None keeps the library's default: 4 streams, parts adapted to each object (8 to
    64 MiB), no rate limit, downloads fdatasynced.
    rate: bytes per second over every part in flight (0: unlimited).
    key_file: uploads are encrypted with this key (nubo.keygen makes one), or under a
    KMS key ("kms:KEY"); downloads of objects encrypted with a key file need it.
    profile, server_side_encryption ("AES256" or "aws:kms"), kms_key_id: for s3:// only.
    symlinks: "follow" (the default, as aws s3 cp: a link leaving the tree only with
    follow_outside; dangling links and loops skipped), "store" (the link itself, restored by a
    copy that also stores links) or "skip"; the summary counts links followed, stored, skipped.
    Raises NuboError (INVALID_ARGUMENT: URLs, options, missing or refused credentials;
    NOT_FOUND: a bucket, directory or object; UNAVAILABLE: unreachable, call again to resume;
    CORRUPT; CANCELLED)."""
    lib = _lib.lib()
    s3 = filled(nubo_transfer_s3_options, "nubo_transfer_s3_options_init", profile=profile,
                server_side_encryption=server_side_encryption, kms_key_id=kms_key_id,
                source_profile=source_profile)
    o = filled(nubo_transfer_copy_options, "nubo_transfer_copy_options_init", streams=streams,
               part_size=part_size, keep_partial=keep_partial, sync=sync, exclude=exclude,
               include=include, rate=rate, key_file=key_file, journal_dir=journal_dir, s3=s3,
               symlinks=_symlinks(symlinks), follow_outside=follow_outside)
    call = _call(progress)
    o.progress = call.c
    source_bytes, destination_bytes = _path(source), _path(destination)
    s = nubo_transfer_copy_summary()
    call.run(lambda: lib.nubo_transfer_copy(source_bytes, destination_bytes, ctypes.byref(o),
                                            ctypes.byref(s)))
    return CopySummary._from_c(s)


def _symlinks(value: Union[str, Symlinks, None]) -> Optional[int]:
    if value is None or isinstance(value, int):
        return value
    try:
        return int(Symlinks[str(value).upper()])
    except KeyError:
        raise ValueError(f"symlinks {value!r}: follow, store or skip") from None


def is_store_url(text: StrPath) -> bool:
    """Whether `text` names a store (s3://, gs://, file://) rather than a local path."""
    return bool(_lib.lib().nubo_transfer_is_store_url(_path(text)))


def access_policy(places: Union[str, Iterable[str]], operations: Iterable[str]) -> str:
    """The IAM policy (JSON text) that `operations` need on `places` and nothing more.
    places: s3://BUCKET/PREFIX URLs; operations: "pack", "unpack" (also list, cat, verify),
    "cp", "sync", "checkpoint", and "kms:KEY-ARN" for a key their server-side encryption uses.

        >>> print(nubo.access_policy("s3://my-bucket/run1/", ["checkpoint"]))

    Raises NuboError (INVALID_ARGUMENT: a URL that is not s3://, an unknown operation, a
    malformed ARN)."""
    if isinstance(places, str):
        places = [places]
    place_array, place_count = _patterns(places)
    op_array, op_count = _patterns(operations)
    return _lib.read_text(_lib.lib().nubo_transfer_access_policy, place_array, place_count,
                          op_array, op_count)


def sync(source: StrPath, destination: StrPath, *, delete: bool = False, dry_run: bool = False,
         streams: Optional[int] = None, part_size: Optional[int] = None,
         exclude: Iterable[str] = (), include: Iterable[str] = (),
         rate: Optional[float] = None, journal_dir: Optional[StrPath] = None,
         profile: Optional[str] = None, source_profile: Optional[str] = None,
         server_side_encryption: Optional[str] = None,
         kms_key_id: Optional[str] = None,
         on_change: Optional[Callable[[str], object]] = None,
         allow_empty_source: bool = False, max_delete: Optional[int] = None,
         backup_dir: Optional[StrPath] = None, symlinks: Union[str, Symlinks, None] = None,
         follow_outside: Optional[bool] = None) -> SyncSummary:
    """Makes `destination` hold what `source` holds, copying only what is new or changed (by
    size and checksum, not by time alone): a local directory or a store PREFIX/ each, at least
    one a store. delete: remove at the destination what the source does not have, once every
    copy has succeeded. dry_run: change nothing; the counts say what would be done.
    on_change: called with each change ("copy PATH", "delete PATH") once all are decided,
    before any is made (with dry_run: the list of what would be done). With delete, a source
    that holds nothing is refused unless allow_empty_source, and more deletions than
    max_delete are refused before any change (as rclone's --max-delete); backup_dir: what is
    deleted or replaced is moved there first (rclone's --backup-dir). The other options
    (symlinks included) are copy()'s.

        >>> changes = []
        >>> nubo.sync("ckpt/", "s3://backups/ckpt/", dry_run=True, on_change=changes.append)

        >>> s = nubo.sync("s3://ckpt/", "s3://ckpt-dr/", profile="dr", delete=True)

    Raises NuboError as copy() does, and INVALID_ARGUMENT for two local directories, an object
    where a prefix is needed, places that are the same or lie one inside the other however
    spelled, an empty source with delete, or more deletions than max_delete."""
    s3 = filled(nubo_transfer_s3_options, "nubo_transfer_s3_options_init", profile=profile,
                server_side_encryption=server_side_encryption, kms_key_id=kms_key_id,
                source_profile=source_profile)
    copy_options = filled(nubo_transfer_copy_options, "nubo_transfer_copy_options_init",
                          streams=streams, part_size=part_size, exclude=exclude,
                          include=include, rate=rate, journal_dir=journal_dir, s3=s3,
                          symlinks=_symlinks(symlinks), follow_outside=follow_outside)
    o = filled(nubo_transfer_sync_options, "nubo_transfer_sync_options_init", copy=copy_options,
               delete_extra=delete, dry_run=dry_run, allow_empty_source=allow_empty_source,
               max_delete=max_delete, backup_dir=backup_dir)
    raised: list[BaseException] = []

    def change(text: bytes, _user: object) -> None:
        # An exception cannot cross the C call: kept, and raised once it returns.
        if not raised:
            try:
                on_change(text.decode("utf-8", "replace"))
            except BaseException as e:  # noqa: B902 - re-raised below
                raised.append(e)

    callback = nubo_transfer_change_callback(change) if on_change else None
    if callback is not None:
        o.change = callback
    s = nubo_transfer_sync_summary()
    _lib.check(_lib.lib().nubo_transfer_sync(_path(source), _path(destination), ctypes.byref(o),
                                             ctypes.byref(s)))
    if raised:
        raise raised[0]
    return SyncSummary._from_c(s)
