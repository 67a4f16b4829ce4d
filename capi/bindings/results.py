"""The result structs of the C ABI in every language, from the headers alone.

A struct whose comment names its C++ type, "(C++: nubo::transfer::Summary)", and that has no _init
(which would make it an input, options.py's) is a result: the
library fills it from that C++ value and the caller reads it. For each one this writes
  - the C++ -> C conversion capi/src uses (capi/src/generated/results.hpp): one assign() per C
    field, so that a C field without a C++ counterpart of a compatible type does not compile
    (capi/src/result_fields.hpp says what is compatible). A field is made from the C++ member of
    its name, or from the expression ending its comment, "(C++: time.total_s())": a member path
    or getter of the C++ value;
  - Python's frozen dataclass with its conversion from the ctypes mirror (nubo/_results.py);
  - Rust's owned struct with its conversion from the C struct (src/results.rs).

What a field holds, read from its C type and its comment (which become the docs):
  - a number; an int whose comment says what nonzero means is a flag, bool in Python and Rust;
  - a number whose comment says "< 0: none" (or "<= 0: none") is optional: None in Python,
    Option in Rust;
  - a marked enum (enums.py) is that enum's type in Python and Rust;
  - `const char*` is text the library owns while its handle lives (a result with text is read
    from an info accessor and copied out at once); one whose comment says "one per line" is a
    list of lines: tuple[str, ...] in Python, Vec<String> in Rust, and made in C++ from a list of
    strings; one whose comment says "key=value, one per line" is a map: dict[str, str] in
    Python, BTreeMap<String, String> in Rust, made from a std::map;
  - an array indexed by codec (NUBO_CODEC_SLOTS) is the per-codec counts of each language.
Several C structs made from one C++ type (an alias kept for the ABI) share the first one's Python
and Rust type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from c_header import Abi, Enum, Field, HeaderError, Struct
from doc_text import GENERATED, field_doc, is_flag, python_doc, rust_doc, sentence
from enums import cpp_checks
from options import is_input


_PY = {"int": "int", "unsigned": "int", "size_t": "int", "uint16_t": "int", "uint32_t": "int",
       "uint64_t": "int", "int64_t": "int", "float": "float", "double": "float"}
_RUST = {"int": "i32", "unsigned": "u32", "size_t": "usize", "uint16_t": "u16",
         "uint32_t": "u32", "uint64_t": "u64", "int64_t": "i64", "float": "f32", "double": "f64"}
# Arrays by their length's constant: (Python type, Python conversion, Rust type, Rust conversion).
_ARRAYS = {"NUBO_CODEC_SLOTS": ("dict[Codec, int]", "chunk_counts({})", "ChunkCounts",
                                "ChunkCounts({})")}
# "< 0: none" or "<= 0: none" in a number's comment: the comparison that means "no value".
_NONE_WHEN = re.compile(r"(<=?) 0: none\b")
# The kinds that point to text the library owns.
_TEXTS = {"text", "lines", "pairs"}


@dataclass
class Kind:
    """How one field crosses: its kind ("number", "flag", "optional", "enum", "text", "lines",
    "pairs", "counts"), the C++ expression it is made from, and for an optional number the comparison
    with 0 that means none."""

    kind: str
    cpp: str
    none_when: str = ""


def kind_of(abi: Abi, s: Struct, f: Field) -> Kind:
    where = f"{s.header}: {s.name}.{f.name}"
    expr = s.field_cpp.get(f.name, f.name)
    cpp = expr if re.search(r"\bin\b", expr) else f"in.{expr}"
    t = f.type
    doc = s.field_docs.get(f.name, "")
    if t.array:
        if t.array[0] not in _ARRAYS:
            raise HeaderError(f"{where}: no conversion for an array of {t.array[0]}")
        return Kind("counts", cpp)
    if t.pointers:
        if t.base == "char" and t.const and len(t.pointers) == 1:
            if "key=value, one per line" in doc:
                return Kind("pairs", cpp)
            return Kind("lines" if "one per line" in doc else "text", cpp)
        raise HeaderError(f"{where}: a result holds numbers, flags, enums, text and per-codec "
                          "counts only (what else would the caller own?)")
    found = abi.find(t.base)
    if isinstance(found, Enum):
        if not found.cpp:
            raise HeaderError(f"{where}: {t.base} needs its (C++: ...) to be a result's field")
        return Kind("enum", cpp)
    if t.base not in _PY:
        raise HeaderError(f"{where}: no conversion for '{t}'")
    if is_flag(s, f):
        return Kind("flag", cpp)
    none = _NONE_WHEN.search(doc)
    return Kind("optional", cpp, none.group(1)) if none else Kind("number", cpp)


def results(abi: Abi) -> list[Struct]:
    out = [d for d in abi.order if isinstance(d, Struct) and d.cpp and not is_input(abi, d)]
    for s in out:
        if not s.sized:
            raise HeaderError(f"{s.header}: the result {s.name} must begin with struct_size")
        for f in s.fields[1:]:
            kind_of(abi, s, f)
    return out


def _has_text(abi: Abi, s: Struct) -> bool:
    return any(kind_of(abi, s, f).kind in _TEXTS for f in s.fields[1:])


def _has_enum(abi: Abi, s: Struct) -> bool:
    return any(kind_of(abi, s, f).kind == "enum" for f in s.fields[1:])


def _type_name(s: Struct) -> str:
    return s.cpp.split("::")[-1]


def _enum_name(abi: Abi, f: Field) -> str:
    return abi.find(f.type.base).cpp.split("::")[-1]


def _firsts(structs: list[Struct]) -> list[Struct]:
    """One struct per C++ type: the first, whose Python and Rust type the others share."""
    seen: set[str] = set()
    out = []
    for s in structs:
        if s.cpp not in seen:
            seen.add(s.cpp)
            out.append(s)
    return out


# ---- C++ ----------------------------------------------------------------------------------


def cpp(abi: Abi) -> str:
    out = [f"// {GENERATED}", "// The C result structs filled from their C++ values "
           "(capi/bindings/results.py).", "#pragma once", "",
           '#include "nubo.h"', '#include "nubo/nubo.hpp"', '#include "result_fields.hpp"', "",
           "namespace nubo::capi {", ""] + cpp_checks(abi)
    for s in results(abi):
        texts = _has_text(abi, s)
        out.append("")
        if texts:
            out.append("// Its text points into `in` and `texts`, which must outlive it.")
        parameters = f"const {s.cpp}& in" + (", Texts& texts" if texts else "")
        out += [f"inline {s.name} to_{s.name}({parameters}) {{",
                f"  {s.name} out{{}};", "  out.struct_size = sizeof out;"]
        for f in s.fields[1:]:
            k = kind_of(abi, s, f)
            if k.kind in _TEXTS:
                out.append(f"  assign_text(out.{f.name}, {k.cpp}, texts);")
            else:
                out.append(f"  assign(out.{f.name}, {k.cpp});")
        out += ["  return out;", "}"]
    out += ["", "}  // namespace nubo::capi", ""]
    return "\n".join(out)


# ---- Python -------------------------------------------------------------------------------


def _python_field(abi: Abi, s: Struct, f: Field) -> tuple[str, str]:
    """(its Python type, its value read from the ctypes struct `c`)."""
    k, c = kind_of(abi, s, f), f"c.{f.name}"
    if k.kind == "counts":
        py_type, convert = _ARRAYS[f.type.array[0]][:2]
        return py_type, convert.format(c)
    if k.kind == "flag":
        return "bool", f"bool({c})"
    if k.kind == "optional":
        return f"Optional[{_PY[f.type.base]}]", f"None if {c} {k.none_when} 0 else {c}"
    if k.kind == "enum":
        name = _enum_name(abi, f)
        return name, f"{name}({c})"
    if k.kind == "text":
        return "str", f"text({c})"
    if k.kind == "lines":
        return "tuple[str, ...]", f"lines({c})"
    if k.kind == "pairs":
        return "dict[str, str]", f"pairs({c})"
    return _PY[f.type.base], c


def python(abi: Abi) -> str:
    structs = _firsts(results(abi))
    kinds = {kind_of(abi, s, f).kind for s in structs for f in s.fields[1:]}
    enum_types = sorted({_enum_name(abi, f) for s in structs for f in s.fields[1:]
                         if kind_of(abi, s, f).kind == "enum"} |
                        ({"Codec"} if "counts" in kinds else set()))
    mirrors = ", ".join(s.name for s in structs)
    out = ['"""The result types of the C ABI as Python values.', "", GENERATED, '"""', "",
           "from __future__ import annotations", "", "from dataclasses import dataclass"]
    if "optional" in kinds:
        out.append("from typing import Optional")
    out.append("")
    out += [f"from ._abi import ({mirrors})" if len(mirrors) < 80 else "from ._abi import ("]
    if len(mirrors) >= 80:
        words, line = mirrors.split(", "), "    "
        for w in words:
            if len(line) + len(w) + 2 > 99:
                out.append(line.rstrip())
                line = "    "
            line += w + ", "
        out += [line.rstrip(), ")"]
    if "counts" in kinds:
        out.append("from ._codecs import chunk_counts")
    if enum_types:
        out.append(f"from ._enums import {', '.join(enum_types)}")
    if kinds & _TEXTS:
        out.append("from ._lib import " + ", ".join(sorted(
            {"text": "text", "lines": "lines", "pairs": "pairs"}[k] for k in kinds & _TEXTS)))
    for s in structs:
        name = _type_name(s)
        out += ["", "", "@dataclass(frozen=True)", f"class {name}:",
                f'    """{sentence(s.doc) or name} (C: {s.name})"""', ""]
        if len(out[-2]) > 100:
            raise HeaderError(f"{s.header}: the comment of {s.name} is too long for a docstring")
        values = []
        for f in s.fields[1:]:
            py_type, value = _python_field(abi, s, f)
            out.append(f"    {f.name}: {py_type}")
            out += python_doc(field_doc(s, f))
            values.append(f"{f.name}={value}")
        out += ["", "    @classmethod", f"    def _from_c(cls, c: {s.name}) -> {name}:",
                "        return cls(" + ",\n                   ".join(values) + ")"]
    return "\n".join(out) + "\n"


# ---- Rust ---------------------------------------------------------------------------------


def _rust_field(abi: Abi, s: Struct, f: Field) -> tuple[str, str]:
    """(its Rust type, its value read from the C struct `c`)."""
    k, c = kind_of(abi, s, f), f"c.{f.name}"
    if k.kind == "counts":
        _, _, rust_type, convert = _ARRAYS[f.type.array[0]]
        return rust_type, convert.format(c)
    if k.kind == "flag":
        return "bool", f"{c} != 0"
    if k.kind == "optional":
        keep = ">" if k.none_when == "<=" else ">="
        zero = "0.0" if f.type.base in ("float", "double") else "0"
        return f"Option<{_RUST[f.type.base]}>", f"({c} {keep} {zero}).then_some({c})"
    if k.kind == "enum":
        name = _enum_name(abi, f)
        return (f"crate::enums::{name}",
                f'known(crate::enums::{name}::from_raw({c}), "{s.name}.{f.name}", {c})?')
    if k.kind == "text":
        return "String", f"owned({c})"
    if k.kind == "lines":
        return "Vec<String>", f"owned_lines({c})"
    if k.kind == "pairs":
        return "std::collections::BTreeMap<String, String>", f"owned_pairs({c})"
    return _RUST[f.type.base], c


def rust(abi: Abi) -> str:
    structs = _firsts(results(abi))
    kinds = {kind_of(abi, s, f).kind for s in structs for f in s.fields[1:]}
    out = ["//! The result types of the C ABI as Rust values.", "//!", f"//! {GENERATED}", "",
           "use crate::ffi;"]
    if "counts" in kinds:
        out.append("use crate::transfer::ChunkCounts;")
    if kinds & _TEXTS:
        out.append("use crate::{" + ", ".join(sorted(
            {"text": "owned", "lines": "owned_lines", "pairs": "owned_pairs"}[k]
            for k in kinds & _TEXTS)) + "};")
    if "enum" in kinds:
        out += ["use crate::{Error, Status};", "",
                "/// A value of an enum this crate knows, or the error naming a newer library's.",
                "fn known<T>(value: Option<T>, what: &str, raw: i32) -> Result<T, Error> {",
                "    value.ok_or_else(|| {",
                "        Error::new(Status::Unsupported, format!(\"the library reports {what} "
                "{raw}, newer than this crate\"))",
                "    })", "}"]
    for s in structs:
        name = _type_name(s)
        texts, enums_in = _has_text(abi, s), _has_enum(abi, s)
        derives = "Debug, Clone, PartialEq" if texts else "Debug, Clone, Copy, PartialEq"
        if not texts and not enums_in:
            derives += ", Default"
        out += ["", f"/// {sentence(s.doc) or name} (C: `{s.name}`)", f"#[derive({derives})]",
                f"pub struct {name} {{"]
        values = []
        for f in s.fields[1:]:
            rust_type, value = _rust_field(abi, s, f)
            out += rust_doc(field_doc(s, f))
            out.append(f"    pub {f.name}: {rust_type},")
            values.append(f"            {f.name}: {value},")
        out.append("}")
        if texts or enums_in:
            safety = ("    ///\n    /// # Safety\n    /// `c`'s text is alive (the handle it was "
                      "read from is).\n" if texts else "")
            unsafe = "unsafe " if texts else ""
            out += ["", f"impl {name} {{",
                    f"    /// The value of a filled `{s.name}`; an enum value newer than this "
                    "crate is an error.", *([safety.rstrip("\n")] if safety else []),
                    f"    pub(crate) {unsafe}fn from_c(c: &ffi::{s.name}) -> "
                    f"Result<{name}, Error> {{", f"        Ok({name} {{"]
            out += values
            out += ["        })", "    }", "}"]
        else:
            out += ["", f"impl From<&ffi::{s.name}> for {name} {{",
                    f"    fn from(c: &ffi::{s.name}) -> {name} {{", f"        {name} {{"]
            out += values
            out += ["        }", "    }", "}"]
    if kinds & _TEXTS and "enum" not in kinds:
        out.insert(out.index("use crate::ffi;") + 1, "use crate::Error;")
    return "\n".join(out) + "\n"
