"""ctypes mirror of capi/nubo.h, and how libnubo_c.so is found.

Everything here copies nubo.h by hand: keep the two in step. Structs are declared field by field
in the header's order; enums are C ints (4 bytes on every ABI nubo supports). The library is
loaded on first use, so `import nubo` works even where the library is missing and the error
comes, with the list of places tried, from the first call that needs it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import (POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_uint32, c_uint64,
                    c_void_p)
from pathlib import Path
from typing import Any, Optional, Union

from .errors import NuboError, Status

# NUBO_ABI_VERSION of the nubo.h these declarations copy. A library with another ABI version has
# incompatible structs or calls, so loading it is refused rather than risking memory corruption.
ABI_VERSION = 1

# ---- Structs ------------------------------------------------------------------------------


class nubo_report(Structure):
    """Opaque: only ever handled through a pointer."""


class _Sized(Structure):
    """A struct that begins with `uint32_t struct_size`, set here to this mirror's size.

    nubo reads and writes only the bytes struct_size covers, which is what keeps this package
    working with a newer library whose structs have grown.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.struct_size = ctypes.sizeof(self)


class nubo_discover_options(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("sim_devices", c_char_p),
        ("sim_topology_file", c_char_p),
        ("probe_cuda", c_int),
        ("cuda_plugin_path", c_char_p),
    ]


class nubo_device_info(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("backend", c_int),  # nubo_backend
        ("index", c_int),
        ("ordinal", c_int),
        ("name", c_char_p),
        ("model", c_char_p),
        ("uuid", c_char_p),
        ("pci_bus_id", c_char_p),
        ("cc_major", c_int),
        ("cc_minor", c_int),
        ("multiprocessors", c_int),
        ("clock_mhz", c_int),
        ("memory_total", c_uint64),
        ("memory_free", c_uint64),
        ("memory_bandwidth_gbs", c_double),
        ("peak_tflops_fp32", c_double),
        ("peak_tflops_tf32", c_double),
        ("peak_tflops_fp16", c_double),
        ("peak_tflops_bf16", c_double),
        ("peak_source", c_char_p),
        ("numa_node", c_int),
        ("mig_enabled", c_int),
    ]


class nubo_host_info(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("model", c_char_p),
        ("logical_cores", c_int),
        ("physical_cores", c_int),
        ("sockets", c_int),
        ("numa_nodes", c_int),
        ("memory_total", c_uint64),
        ("memory_available", c_uint64),
        ("blas", c_char_p),
    ]


class nubo_driver_info(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("loaded", c_int),
        ("driver_version", c_int),
        ("runtime_version", c_int),
        ("driver_release", c_char_p),
    ]


class nubo_link_info(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("kind", c_int),  # nubo_link_kind
        ("nvlinks", c_int),
        ("peer_access", c_int),
        ("name", c_char_p),
    ]


class nubo_diagnosis_info(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("code", c_char_p),
        ("severity", c_int),  # nubo_severity
        ("message", c_char_p),
        ("advice", c_char_p),
    ]


class nubo_select_request(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("count", c_int),
        ("min_memory", c_uint64),
        ("min_cc_major", c_int),
        ("min_cc_minor", c_int),
    ]


ReportPtr = POINTER(nubo_report)
_status = c_int  # nubo_status

# ---- Functions: name -> (restype, argtypes) ----------------------------------------------

_FUNCTIONS: dict[str, tuple[Optional[type], list[type]]] = {
    "nubo_status_string": (c_char_p, [c_int]),
    "nubo_last_error": (c_char_p, []),
    "nubo_version": (c_char_p, []),
    "nubo_abi_version": (c_int, []),
    "nubo_discover_options_init": (_status, [POINTER(nubo_discover_options), c_size_t]),
    "nubo_discover": (_status, [POINTER(nubo_discover_options), POINTER(ReportPtr)]),
    "nubo_report_free": (None, [ReportPtr]),
    "nubo_select_request_init": (_status, [POINTER(nubo_select_request), c_size_t]),
    "nubo_report_device_count": (c_size_t, [ReportPtr]),
    "nubo_report_device": (_status, [ReportPtr, c_size_t, POINTER(nubo_device_info)]),
    "nubo_report_host": (_status, [ReportPtr, POINTER(nubo_host_info)]),
    "nubo_report_driver": (_status, [ReportPtr, POINTER(nubo_driver_info)]),
    "nubo_report_link": (_status, [ReportPtr, c_size_t, c_size_t, POINTER(nubo_link_info)]),
    "nubo_report_diagnosis_count": (c_size_t, [ReportPtr]),
    "nubo_report_diagnosis": (_status, [ReportPtr, c_size_t, POINTER(nubo_diagnosis_info)]),
    # buf is written to: a c_void_p takes both None and a create_string_buffer().
    "nubo_report_json": (_status, [ReportPtr, c_void_p, c_size_t, POINTER(c_size_t)]),
    "nubo_report_select": (_status, [ReportPtr, POINTER(nubo_select_request), POINTER(c_size_t),
                                     c_size_t, POINTER(c_size_t)]),
}

# ---- Loading -----------------------------------------------------------------------------

BUNDLED_DIR = Path(__file__).resolve().parent / "_libs"
SYSTEM_DIRS = (Path("/usr/local/lib"),)

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
    bundled = _bundled_candidates()
    for path in bundled:
        cdll = _try_load(str(path), tried, f"bundled {path}")
        if cdll is not None:
            return cdll, str(path)
    if not bundled:
        tried.append(f"bundled {BUNDLED_DIR}/libnubo_c.so: not present (the package was "
                     "installed without a build of nubo)")

    # 3. The system: the linker cache, then the dynamic loader's own search (LD_LIBRARY_PATH),
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
        "\nBuild nubo (make) and reinstall the package with NUBO_LIB_DIR=<build>/lib "
        "pip install ./capi/python, or set NUBO_LIBRARY=/path/to/libnubo_c.so.")


def _declare(cdll: ctypes.CDLL, origin: str,
             functions: Optional[dict[str, tuple[Optional[type], list[type]]]] = None) -> None:
    for name, (restype, argtypes) in (functions or _FUNCTIONS).items():
        try:
            function = getattr(cdll, name)
        except AttributeError:
            raise NuboError(Status.UNSUPPORTED, f"nubo: {origin} lacks {name}: it is not a "
                            "libnubo_c.so this package can use") from None
        function.restype = restype
        function.argtypes = argtypes


def register(functions: dict[str, tuple[Optional[type], list[type]]]) -> None:
    """Adds a capability module's function signatures (name -> (restype, argtypes)).

    Each capability (devices, transfer, cost, ...) keeps its ctypes declarations in its own
    module and registers them at import; they are applied when the library is loaded, or at
    once if it already is."""
    with _lock:
        _FUNCTIONS.update(functions)
        if _loaded is not None:
            _declare(_loaded, _loaded_from or "libnubo_c.so", functions)


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


def read_text(function: Any, *args: Any) -> str:
    """Text from an entry point that writes it into the caller's buffer (nubo_report_json and
    the like). Asking with no buffer is how the C API tells the size: it answers
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
