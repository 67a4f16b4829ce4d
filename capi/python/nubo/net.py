"""Sending files over the network: nubo.net.send() and nubo.net.Server (docs/net.md).

    >>> from nubo import net
    >>> with net.Server(dest="/data", token=token) as server:       # 127.0.0.1, a free port
    ...     s = net.send(["dataset/"], f"127.0.0.1:{server.port}/run1", token=token)
    >>> s.bytes_sent, s.bytes_skipped, s.bytes_resumed, s.wire_bytes

Running the same send again after an interruption sends only what the receiver has not
verified. A progress callable receives a SendProgress and returns True to go on, False to cancel:
the call then raises NuboError with status CANCELLED. An exception raised by the callable cancels
too, and is re-raised from the call; so does Ctrl-C, within a second, with or without a callable.
A token is text or bytes; None takes the secret from NUBO_TOKEN.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, c_char_p
from typing import Callable, Iterable, Optional, Union

from . import _lib, _results
from ._abi import (nubo_net_progress, nubo_net_progress_callback, nubo_net_send_options,
                   nubo_net_send_summary, nubo_net_server, nubo_net_server_options,
                   nubo_net_server_stats_info)
from ._progress import Fraction, ProgressCall
from .errors import NuboError, Status
from ._results import SendSummary, ServerStats
from .transfer import Codec, _codec, _patterns

StrPath = Union[str, "os.PathLike[str]"]

# ---- Handles and callbacks (the structs are _abi.py's, generated from nubo_net.h) --------

PROGRESS_CALLBACK = nubo_net_progress_callback
ServerPtr = POINTER(nubo_net_server)


# ---- Python side ---------------------------------------------------------------------------


class SendProgress(_results.SendProgress, Fraction):
    """What a send's progress callable sees (nubo_net_progress), and its fraction done."""


SendProgressFn = Callable[[SendProgress], bool]


def _progress(c: nubo_net_progress) -> SendProgress:
    return SendProgress._from_c(c)


_path = _lib.path_bytes


Token = Union[str, bytes, bytearray]


def _token(token: Optional[Token]) -> Optional[bytes]:
    """The shared secret as the C ABI takes it: text or bytes, never empty, no NUL byte (the C
    string would end there and silently shorten the secret)."""
    if token is None:
        return None
    value = token.encode() if isinstance(token, str) else bytes(token)
    if not value:
        raise NuboError(Status.INVALID_ARGUMENT,
                        "token is empty: give the shared secret, or None to read NUBO_TOKEN")
    if b"\0" in value:
        raise NuboError(Status.INVALID_ARGUMENT,
                        "token holds a NUL byte, which would cut it short: use text or hex")
    return value


def send(sources: Union[StrPath, Iterable[StrPath]], destination: str, *,
         token: Optional[Token] = None, codec: Union[str, Codec] = "auto", level: int = 0,
         chunk_size: Optional[int] = None, threads: int = 0, memory_limit: Optional[int] = None,
         streams: Optional[int] = None, rate: float = 0, timeout: Optional[float] = None,
         progress: Optional[SendProgressFn] = None, encrypt: bool = True,
         ca_file: Optional[StrPath] = None, server_name: Optional[str] = None,
         exclude: Iterable[str] = (), include: Iterable[str] = ()) -> SendSummary:
    """Sends files and directories to the server at destination, "HOST:PORT[/SUBDIR]"; resumes
    an interrupted send of the same sources. rate: wire bytes/s (0: unlimited). Every connection
    is TLS 1.3, keyed from the token, or with ca_file the server's certificate is checked against
    that CA and server_name (default: the host); encrypt=False sends in the clear (trusted links
    only). Raises NuboError (UNAVAILABLE: unreachable or cut, call again; INVALID_ARGUMENT:
    refused token; CANCELLED)."""
    if isinstance(sources, (str, bytes, os.PathLike)):
        sources = [sources]  # type: ignore[list-item]
    encoded = [_path(s) for s in sources]  # type: ignore[union-attr]
    lib = _lib.lib()
    o = nubo_net_send_options()
    _lib.check(lib.nubo_net_send_options_init(ctypes.byref(o), ctypes.sizeof(o)))
    o.codec, o.level, o.threads, o.rate = _codec(codec), level, threads, rate
    if chunk_size is not None:
        o.chunk_size = chunk_size
    if memory_limit is not None:
        o.memory_limit = memory_limit
    if streams is not None:
        o.streams = streams
    if timeout is not None:
        o.timeout_seconds = timeout
    o.token = _token(token)
    o.encrypt = int(encrypt)
    o.ca_file = _path(ca_file) if ca_file else None
    o.server_name = server_name.encode() if server_name else None
    excluded, o.exclude_count = _patterns(exclude)
    included, o.include_count = _patterns(include)
    o.exclude, o.include = excluded, included
    call = ProgressCall(PROGRESS_CALLBACK, _progress, progress)
    o.progress = call.c
    array = (c_char_p * max(len(encoded), 1))(*encoded)
    target = destination.encode()
    s = nubo_net_send_summary()
    call.run(lambda: lib.nubo_net_send(array, len(encoded), target, ctypes.byref(o),
                                       ctypes.byref(s)))
    return SendSummary._from_c(s)


class Server(_lib.Handle):
    """A receiving server, listening from construction until stop() (or the end of a with
    block, or close(), which stops it and frees it). listen "ADDR:PORT"; the default "127.0.0.1:0" picks a free loopback port (see
    .port). Every write lands below dest, which must exist unless mkdir. Clients get TLS
    keyed from the token, or cert_file/key_file when given; require_encryption refuses clients
    in the clear. handshake_timeout bounds how long a client may take to authenticate;
    setuid, setgid and sticky bits are dropped unless preserve_special_modes."""

    _what = "server"

    def __init__(self, dest: StrPath, *, listen: Optional[str] = None,
                 token: Optional[Token] = None, timeout: Optional[float] = None,
                 max_connections: Optional[int] = None, sync: bool = True,
                 cert_file: Optional[StrPath] = None, key_file: Optional[StrPath] = None,
                 require_encryption: bool = False, handshake_timeout: Optional[float] = None,
                 mkdir: bool = False, preserve_special_modes: bool = False) -> None:
        self._lib = _lib.lib()
        o = nubo_net_server_options()
        _lib.check(self._lib.nubo_net_server_options_init(ctypes.byref(o), ctypes.sizeof(o)))
        o.dest = _path(dest)
        o.listen = listen.encode() if listen else None
        o.token = _token(token)
        if timeout is not None:
            o.timeout_seconds = timeout
        if max_connections is not None:
            o.max_connections = max_connections
        o.sync = int(sync)
        o.cert_file = _path(cert_file) if cert_file else None
        o.key_file = _path(key_file) if key_file else None
        o.require_encryption = int(require_encryption)
        if handshake_timeout is not None:
            o.handshake_seconds = handshake_timeout
        o.mkdir = int(mkdir)
        o.preserve_special_modes = int(preserve_special_modes)
        handle = ServerPtr()
        _lib.check(self._lib.nubo_net_server_start(ctypes.byref(o), ctypes.byref(handle)))
        self._own(handle, self._lib.nubo_net_server_free)
        self.port: int = int(self._lib.nubo_net_server_port(handle))

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stats(self) -> ServerStats:
        s = nubo_net_server_stats_info()
        _lib.check(self._lib.nubo_net_server_stats(self._h(), ctypes.byref(s)))
        return ServerStats._from_c(s)

    def stop(self) -> None:
        """Stops listening and closes every connection; stats() stays readable."""
        if self._handle is not None:
            _lib.check(self._lib.nubo_net_server_stop(self._handle))

