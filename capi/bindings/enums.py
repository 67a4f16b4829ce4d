"""The C ABI's enums as types of Python and Rust, from the headers alone.

An enum whose comment names its C++ type, "(C++: nubo::transfer::Codec)", becomes
  - in Python, an OpenIntEnum (nubo/_enums.py): members named as the constants without their
    common prefix (NUBO_CODEC_ZSTD -> ZSTD), values kept unknown to this package still read;
  - in Rust, an enum (src/enums.rs) with CamelCase variants (Zstd), `raw()` and `from_raw()`.
The header's comments become the docs. A new value is then written in the C++ enum, the C
enum, and what implements it.
"""

from __future__ import annotations

import os

from c_header import Abi, Enum
from doc_text import GENERATED, python_doc, rust_doc, sentence

# Rust variants the CamelCase rule cannot make (`Self` is a keyword) or would spell unlike
# the name users know (NVLink).
_RUST_VARIANTS = {"NUBO_LINK_SELF": "SameDevice", "NUBO_LINK_NVLINK": "NvLink"}


def marked(abi: Abi) -> list[Enum]:
    return [d for d in abi.order if isinstance(d, Enum) and d.cpp]


def prefix(e: Enum) -> str:
    """What every constant's name begins with: "NUBO_CODEC_"."""
    common = os.path.commonprefix([n for n, _ in e.constants])
    return common[:common.rfind("_") + 1]


def _members(e: Enum) -> list[tuple[str, int, str]]:
    """(the constant's name without the enum's prefix, its value, its doc)."""
    return [(n[len(prefix(e)):], v, e.value_docs.get(n, "")) for n, v in e.constants]


def cpp_checks(abi: Abi) -> list[str]:
    """static_asserts that each marked C enum is its C++ enum, value for value, so that a C
    value converts by a cast (result_fields.hpp, option_fields.hpp)."""
    out = ["// Each marked C enum is its C++ enum, value for value (capi/bindings/enums.py)."]
    for e in marked(abi):
        for name, _ in e.constants:
            cpp = e.value_cpp.get(name, name[len(prefix(e)):].lower())
            out.append(f"static_assert(static_cast<int>({e.cpp}::{cpp}) == {name});")
    return out


def python(abi: Abi) -> str:
    out = ['"""The C ABI\'s enums as Python types.', "", GENERATED, '"""', "",
           "from __future__ import annotations", "", "from ._enum import OpenIntEnum"]
    for e in marked(abi):
        out += ["", "", f"class {e.cpp.split('::')[-1]}(OpenIntEnum):",
                f'    """{sentence(e.doc)} (C: {e.name})"""', ""]
        for name, value, doc in _members(e):
            out.append(f"    {name} = {value}")
            if doc:
                out += python_doc(doc)
    return "\n".join(out) + "\n"


def rust(abi: Abi) -> str:
    out = ["//! The C ABI's enums as Rust types.", "//!", f"//! {GENERATED}", "",
           "use crate::ffi;"]
    for e in marked(abi):
        name = e.cpp.split("::")[-1]
        start = prefix(e)
        members = [(_RUST_VARIANTS.get(start + m,
                                       "".join(p.capitalize() for p in m.lower().split("_"))),
                    m, v, d) for m, v, d in _members(e)]
        out += ["", f"/// {sentence(e.doc)} (C: `{e.name}`)",
                "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]", f"pub enum {name} {{"]
        for variant, _, _, doc in members:
            out += rust_doc(doc)
            out.append(f"    {variant},")
        out += ["}", "", f"impl {name} {{",
                "    #[allow(dead_code)] // an enum only ever read from the library is not handed "
                "back", f"    pub(crate) fn raw(self) -> ffi::{e.name} {{",
                "        match self {"]
        out += [f"            {name}::{variant} => ffi::{start}{m}," for variant, m, _, _ in members]
        out += ["        }", "    }", "",
                "    /// None for a value this crate does not know (a newer library's).",
                "    #[allow(dead_code)] // an enum only ever handed to the library is not read back",
                f"    pub(crate) fn from_raw(raw: ffi::{e.name}) -> Option<{name}> {{",
                "        match raw {"]
        out += [f"            ffi::{start}{m} => Some({name}::{variant})," for variant, m, _, _
                in members]
        out += ["            _ => None,", "        }", "    }", "}"]
    return "\n".join(out) + "\n"
