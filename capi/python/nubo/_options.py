"""C option structs filled from keyword arguments, with every default taken from the library.

    o = filled(nubo_transfer_unpack_options, "nubo_transfer_unpack_options_init", threads=4,
               sync=None)

calls the struct's _init (so an argument left None keeps the library's own default, stated once
in C++), then sets each argument given, converted by its field's C type: numbers and flags as
they are (True is 1), strings and paths as bytes, lists of strings as an array with its
`<name>_count`, and an extension struct (filled the same way) as a pointer to it. The struct
keeps what its pointers reach alive. A name the struct has no field for is a TypeError naming
it: a misspelt option never passes silently.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from . import _lib


def filled(struct_type: Any, init: str, **values: Any) -> Any:
    o = struct_type()
    _lib.check(getattr(_lib.lib(), init)(ctypes.byref(o), ctypes.sizeof(o)))
    fields = dict(struct_type._fields_)
    keep: list[Any] = []
    for name, value in values.items():
        if name not in fields:
            raise TypeError(f"{struct_type.__name__} has no option '{name}'")
        if value is None:
            continue
        kind = fields[name]
        if kind is ctypes.c_char_p:
            value = os.fsencode(os.fspath(value))
        elif kind is ctypes.POINTER(ctypes.c_char_p):
            items = [os.fsencode(os.fspath(v)) for v in value]
            value = (ctypes.c_char_p * max(len(items), 1))(*items)
            setattr(o, f"{name}_count", len(items))
        elif isinstance(value, ctypes.Structure):
            value = ctypes.pointer(value)
        elif isinstance(value, bool):
            value = int(value)
        keep.append(value)
        setattr(o, name, value)
    o._kept = keep  # what the pointers reach lives as long as the struct
    return o
