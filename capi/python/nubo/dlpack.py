"""DLPack capsules, the zero-copy exchange format of NumPy, PyTorch, CuPy and JAX (DLPack 0.6,
as NumPy 1.24 and PyTorch 1.13 speak it), for nubo buffers.

Exporting: a nubo buffer's DLManagedTensor (nubo_buffer_to_dlpack) goes into a "dltensor"
capsule; a consumer (numpy.from_dlpack) renames it "used_dltensor" and calls the tensor's
deleter when done, and an unconsumed capsule calls it when collected.

Importing: the producer's capsule is kept, unconsumed, for as long as nubo uses the memory, and
nubo gets a DLManagedTensor of this module's whose deleter drops the capsule. The producer's
own clean-up (NumPy's drops a reference to the array, so it needs the GIL) therefore always
runs in Python, whichever thread nubo frees the buffer on.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int32, c_int64, c_uint8,
                    c_uint16, c_uint64, c_void_p)
from typing import Any, Optional

from .errors import NuboError, Status

K_DL_CPU = 1
K_DL_CUDA = 2


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    pass


DELETER = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", c_void_p),
    ("deleter", DELETER),
]

_CAPSULE = b"dltensor"
_USED = b"used_dltensor"

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
_api.PyCapsule_IsValid.restype = c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, c_char_p]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
# The destructor's view of the capsule: a raw pointer, because it runs while the capsule is
# being freed and must not take a reference to it.
_is_valid_raw = ctypes.PYFUNCTYPE(c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", _api))
_get_pointer_raw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _api))


# ---- Export ------------------------------------------------------------------------------


@ctypes.PYFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule: int) -> None:
    # An unconsumed capsule still owns its tensor; a consumed one was renamed "used_dltensor".
    if _is_valid_raw(capsule, _CAPSULE):
        pointer = _get_pointer_raw(capsule, _CAPSULE)
        managed = ctypes.cast(pointer, POINTER(DLManagedTensor))
        if managed.contents.deleter:
            managed.contents.deleter(managed)


def capsule_of(managed: int) -> Any:
    """A "dltensor" capsule owning the DLManagedTensor at address `managed`."""
    return _api.PyCapsule_New(managed, _CAPSULE, ctypes.cast(_capsule_destructor, c_void_p))


def device_of(managed: int) -> tuple[int, int]:
    """(device_type, device_id) of a DLManagedTensor."""
    t = ctypes.cast(managed, POINTER(DLManagedTensor)).contents.dl_tensor
    return int(t.device.device_type), int(t.device.device_id)


def free(managed: int) -> None:
    """Calls a DLManagedTensor's deleter (one nubo exported and nobody consumed)."""
    m = ctypes.cast(managed, POINTER(DLManagedTensor))
    if m.contents.deleter:
        m.contents.deleter(m)


# ---- Import ------------------------------------------------------------------------------

_held_lock = threading.Lock()
# Address of each tensor handed to nubo -> (that tensor, the producer's capsule it stands for).
_held: dict[int, tuple[DLManagedTensor, Any]] = {}


@DELETER
def _release(managed: Any) -> None:
    # nubo is done with the memory: drop the producer's capsule, whose destructor frees it.
    # ctypes holds the GIL here, whatever thread nubo calls from.
    with _held_lock:
        _held.pop(ctypes.addressof(managed.contents), None)


def _capsule(obj: Any, stream: Optional[int]) -> Any:
    try:
        return obj.__dlpack__() if stream is None else obj.__dlpack__(stream=stream)
    except BufferError as e:
        text = str(e)
        if "readonly" in text or "read-only" in text:
            raise NuboError(Status.INVALID_ARGUMENT,
                            "the array is read-only, and DLPack cannot say so: pass a writable "
                            "array (for NumPy, array.copy() or array.setflags(write=True))") from e
        raise NuboError(Status.INVALID_ARGUMENT, f"the object cannot be exported through "
                        f"DLPack: {text}") from e


class Borrowed:
    """A DLManagedTensor for nubo over another library's tensor, without a copy. Hand
    `address` to nubo_buffer_from_dlpack; call `adopted()` when it returned NUBO_OK (nubo then
    owns it), and nothing on failure (the producer's capsule frees the memory when collected)."""

    def __init__(self, obj: Any, stream: Optional[int] = None) -> None:
        if not hasattr(obj, "__dlpack__"):
            raise NuboError(Status.INVALID_ARGUMENT, f"a {type(obj).__name__} is neither a nubo "
                            "Buffer nor an object with __dlpack__ (a NumPy array, a PyTorch or "
                            "CuPy tensor)")
        if getattr(obj, "requires_grad", False) and callable(getattr(obj, "detach", None)):
            # A PyTorch parameter (or any tensor autograd tracks) refuses __dlpack__. Its
            # detached view shares the same memory, as `param.data` does, so the collective
            # still works in place on the parameter; autograd does not see the change, as
            # with torch.distributed's own collectives.
            obj = obj.detach()
        self.capsule = _capsule(obj, stream)
        if not _api.PyCapsule_IsValid(self.capsule, _CAPSULE):
            raise NuboError(Status.INVALID_ARGUMENT, "__dlpack__ did not return a live "
                            "'dltensor' capsule (consumed already?)")
        theirs = ctypes.cast(_api.PyCapsule_GetPointer(self.capsule, _CAPSULE),
                             POINTER(DLManagedTensor)).contents
        self.tensor = DLManagedTensor()
        self.tensor.dl_tensor = theirs.dl_tensor  # the shape and strides stay theirs
        self.tensor.manager_ctx = None
        self.tensor.deleter = _release
        self.address = ctypes.addressof(self.tensor)

    def adopted(self) -> None:
        with _held_lock:
            _held[self.address] = (self.tensor, self.capsule)


def dlpack_stream(cuda_stream: Optional[int]) -> Optional[int]:
    """The `stream` argument of __dlpack__ for a consumer on `cuda_stream` (a worker's stream;
    None on the CPU): the DLPack protocol spells CUDA's legacy default stream 1, since 0 is
    ambiguous."""
    if cuda_stream is None:
        return None
    return cuda_stream or 1


__all__ = ["Borrowed", "DLManagedTensor", "K_DL_CPU", "K_DL_CUDA", "capsule_of", "device_of",
           "dlpack_stream", "free"]
