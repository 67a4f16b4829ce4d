"""How libnubo_c.so is found and declared, and the helpers every capability module shares.

The declarations themselves (structs, constants, every function's signature) are _abi.py,
generated from capi/*.h. The library is loaded on first use, so `import nubo` works even where
the library is missing and the error comes, with the list of places tried, from the first call
that needs it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
import weakref
from ctypes import POINTER, c_size_t
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar, Union

from ._abi import FUNCTIONS, NUBO_ABI_VERSION, nubo_device_report
from .errors import NuboError, Status

# NUBO_ABI_VERSION of the headers _abi.py was generated from. A library with another ABI version
# has incompatible structs or calls, so loading it is refused rather than risking memory
# corruption.
ABI_VERSION = NUBO_ABI_VERSION

ReportPtr = POINTER(nubo_device_report)

# ---- Handles ---------------------------------------------------------------------------------

_Self = TypeVar("_Self", bound="Handle")


def _release(free: Callable[[Any], Any], handle: Any, _keep: tuple[Any, ...]) -> None:
    free(handle)


class Handle:
    """A library object that a Python object owns, freed exactly once: by close(), at the end of
    a with block, or when the owner is collected (weakref.finalize, which also runs at exit and
    when a constructor raises after taking the handle). A use after close() is an error naming
    the object (`_what`)."""

    _what = "object"
    _handle: Any = None
    _free: Optional[weakref.finalize] = None

    def _own(self, handle: Any, free: Callable[[Any], Any], *keep: Any) -> None:
        """Takes `handle`, freed by `free`; `keep` (a callback the library calls, an object the
        handle uses) lives until it is freed."""
        self._handle = handle
        self._free = weakref.finalize(self, _release, free, handle, keep)

    def _h(self) -> Any:
        if self._handle is None:
            raise NuboError(Status.INVALID_ARGUMENT, f"the {self._what} is closed")
        return self._handle

    def close(self) -> None:
        """Frees the library's object; a second close does nothing."""
        if self._free is not None:
            self._free()
        self._handle = None

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- Loading -----------------------------------------------------------------------------

BUNDLED_DIR = Path(__file__).resolve().parent / "_libs"
SYSTEM_DIRS = (Path("/usr/local/lib"),)
# Run from a source checkout (capi/python on PYTHONPATH), the package sits three levels under
# the checkout's root, and `make` builds the library into the root's build/lib.
CHECKOUT_ROOT = Path(__file__).resolve().parents[3]


def _checkout_library() -> Optional[Path]:
    """build/lib/libnubo_c.so of the checkout this package is run from; None when the package
    is not run from a checkout."""
    if not (CHECKOUT_ROOT / "capi" / "nubo.h").is_file():
        return None
    return CHECKOUT_ROOT / "build" / "lib" / "libnubo_c.so"

_lock = threading.Lock()
_loaded: Optional[ctypes.CDLL] = None
_loaded_from: Optional[str] = None


def _bundled_candidates() -> list[Path]:
    # setup.py copies libnubo_c.so and its versioned names; any of them is the same library.
    exact = BUNDLED_DIR / "libnubo_c.so"
    versioned = sorted(BUNDLED_DIR.glob("libnubo_c.so.*")) if BUNDLED_DIR.is_dir() else []
    return ([exact] if exact.is_file() else []) + versioned


def _try_load(target: str, tried: list[str], what: str) -> Optional[ctypes.CDLL]:
    try:
        return ctypes.CDLL(target)
    except OSError as e:
        tried.append(f"{what}: {e}")
        return None


def _find_and_load() -> tuple[ctypes.CDLL, str]:
    tried: list[str] = []

    # 1. NUBO_LIBRARY names the library explicitly. If it cannot be loaded that is an error of
    # its own: silently taking another copy would hide which library is really in use.
    explicit = os.environ.get("NUBO_LIBRARY")
    if explicit:
        cdll = _try_load(explicit, tried, f"NUBO_LIBRARY={explicit}")
        if cdll is None:
            raise NuboError(Status.UNAVAILABLE, f"nubo: cannot load the library that "
                            f"NUBO_LIBRARY names: {tried[0]}; fix or unset NUBO_LIBRARY")
        return cdll, explicit
    tried.append("NUBO_LIBRARY: not set")

    # 2. The copy bundled into the package at install time.
    checkout = _checkout_library()
    bundled = _bundled_candidates()
    for path in bundled:
        cdll = _try_load(str(path), tried, f"bundled {path}")
        if cdll is not None:
            return cdll, str(path)
    if not bundled and checkout is None:
        tried.append(f"bundled {BUNDLED_DIR}/libnubo_c.so: not present (the package was "
                     "installed without a build of nubo)")

    # 3. Run from a source checkout rather than installed: the checkout's own build.
    if checkout is not None:
        if checkout.is_file():
            cdll = _try_load(str(checkout), tried, f"this checkout's build, {checkout}")
            if cdll is not None:
                return cdll, str(checkout)
        else:
            tried.append(f"this checkout's build, {checkout}: not built yet (run make in "
                         f"{CHECKOUT_ROOT})")

    # 4. The system: the linker cache, then the dynamic loader's own search (LD_LIBRARY_PATH),
    # then where `cmake --install` puts it by default.
    found = ctypes.util.find_library("nubo_c")
    if found:
        cdll = _try_load(found, tried, f"ctypes.util.find_library('nubo_c') -> {found}")
        if cdll is not None:
            return cdll, found
    else:
        tried.append("ctypes.util.find_library('nubo_c'): not found")
    cdll = _try_load("libnubo_c.so", tried, "libnubo_c.so on the loader's search path")
    if cdll is not None:
        return cdll, "libnubo_c.so"
    for directory in SYSTEM_DIRS:
        path = directory / "libnubo_c.so"
        cdll = _try_load(str(path), tried, str(path))
        if cdll is not None:
            return cdll, str(path)

    raise NuboError(
        Status.UNAVAILABLE,
        "nubo: cannot find libnubo_c.so. Tried:\n  " + "\n  ".join(tried) +
        "\n" + ("Build nubo (make in " + str(CHECKOUT_ROOT) + "), or set "
                "NUBO_LIBRARY=/path/to/libnubo_c.so." if checkout is not None else
                "Build nubo (make) and reinstall the package with NUBO_LIB_DIR=<build>/lib "
                "pip install ./capi/python, or set NUBO_LIBRARY=/path/to/libnubo_c.so."))


def _declare(cdll: ctypes.CDLL, origin: str) -> None:
    for name, (restype, argtypes) in FUNCTIONS.items():
        try:
            function = getattr(cdll, name)
        except AttributeError:
            raise NuboError(Status.UNSUPPORTED, f"nubo: {origin} lacks {name}: it is not a "
                            "libnubo_c.so this package can use") from None
        function.restype = restype
        function.argtypes = argtypes


def lib() -> ctypes.CDLL:
    """The loaded libnubo_c.so with every function declared; loads it on the first call."""
    global _loaded, _loaded_from
    with _lock:
        if _loaded is None:
            cdll, origin = _find_and_load()
            _declare(cdll, origin)
            abi = cdll.nubo_abi_version()
            if abi != ABI_VERSION:
                raise NuboError(Status.UNSUPPORTED,
                                f"nubo: {origin} has ABI version {abi} but this package was "
                                f"written for ABI version {ABI_VERSION}: install the Python "
                                "package that comes with that library")
            _loaded, _loaded_from = cdll, origin
        return _loaded


def library_path() -> str:
    """Where libnubo_c.so was loaded from (a path, or the name given to the loader)."""
    lib()
    assert _loaded_from is not None
    return _loaded_from


def path_bytes(p: "Union[str, os.PathLike[str]]") -> bytes:
    """A path as the C ABI takes it."""
    return os.fsencode(os.fspath(p))


def optional_path_bytes(p: "Optional[Union[str, os.PathLike[str]]]") -> Optional[bytes]:
    """A path as the C ABI takes it, or NULL for None."""
    return None if p is None else path_bytes(p)


def text(value: Optional[bytes]) -> str:
    """A C string from nubo as str; NULL becomes "" (nubo's strings are UTF-8)."""
    return value.decode("utf-8", errors="replace") if value else ""


def lines(value: Optional[bytes]) -> tuple[str, ...]:
    """A C list of lines ("one per line") as a tuple of its non-empty lines."""
    return tuple(line for line in text(value).split("\n") if line)


def pairs(value: Optional[bytes]) -> dict[str, str]:
    """A C map ("key=value, one per line") as a dict."""
    return dict(line.partition("=")[::2] for line in lines(value))


def records(result: Any, struct: Any, count: Any, get: Any, handle: Any) -> list[Any]:
    """Every record of a handle's info accessor (`get(handle, i, &struct)` for i below
    `count(handle)`) as the generated result type, copied out while the handle lives."""
    out = []
    for i in range(count(handle)):
        c = struct()
        check(get(handle, i, ctypes.byref(c)))
        out.append(result._from_c(c))
    return out


def read_text(function: Any, *args: Any) -> str:
    """Text from an entry point that writes it into the caller's buffer (nubo_device_report_json
    and the like). Asking with no buffer is how the C API tells the size: it answers
    INVALID_ARGUMENT with `needed` set; any other outcome is a real error."""
    needed = c_size_t()
    status = function(*args, None, 0, ctypes.byref(needed))
    if status != Status.INVALID_ARGUMENT or needed.value == 0:
        check(status)
        raise NuboError(Status.INTERNAL, f"{function.__name__} gave no size for its text")
    buffer = ctypes.create_string_buffer(needed.value)
    check(function(*args, buffer, len(buffer), ctypes.byref(needed)))
    return buffer.value.decode("utf-8")


def error(status: int) -> NuboError:
    """The NuboError for a failed call, with the calling thread's message from nubo."""
    message = text(lib().nubo_last_error()) or text(lib().nubo_status_string(status))
    return NuboError(Status(status), message)


def check(status: int) -> None:
    """Raises the library's error unless status is NUBO_OK."""
    if status != Status.OK:
        raise error(status)
