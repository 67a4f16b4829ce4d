"""The option structs of the C ABI converted to their C++ types, from the headers alone.

An input struct (one with an _init, which hands out its defaults: options, a request, a workload)
whose comment names its C++ type, "(C++: nubo::transfer::PackOptions)", gets
in capi/src/generated/options.hpp:
  - to_<struct>(const CppType&): the C defaults that nubo_..._options_init hands out, made from a
    default-constructed C++ value, so that every default is stated once, in C++;
  - from_<struct>(const c_struct&, what): the C++ options from the caller's struct;
  - init_options(c_struct*, size), which _init is, and read_options(const c_struct*), the C++
    options of an entry point's argument (NULL: the defaults).
Fields are matched by name (or the C++ member a field's comment names, "(C++: timeout)"), each
through an overload of assign() or take() in
capi/src/option_fields.hpp, so that a C field without a C++ counterpart of a compatible type does
not compile. What C spells in two fields is read as one: a list of strings `X` with its
`X_count`, a callback `X` with its `X_user`. A pointer to another marked options struct is an
extension: NULL keeps the C++ default, else it is read (struct_size and all) and converted.
Rust gets the owned struct (src/options.rs): each value an Option (None keeps the library's
default, from the struct's _init), lists as Vec<String>, paths (fields named *_file, *_dir) as
PathBuf, an extension as its own struct; and `to_raw`, which fills the C struct, keeping what its
pointers reach alive. Callbacks are the Rust functions' arguments, not options. Python fills
these structs at run time from each struct's _init (nubo/_options.py), so its defaults are the
library's too.
"""

from __future__ import annotations

import re

from c_header import Abi, Callback, Enum, Field, HeaderError, Struct
import enums
from doc_text import GENERATED, field_doc, is_flag, rust_doc

# Marked enums whose take() is written by hand (option_fields.hpp), with why.
_CHECKED_BY_HAND = {"nubo_codec": "zero is a codec a summary counts, not one to choose"}
# A callback type and the capi function that makes a C++ callable of it and its user pointer.
_CALLBACKS = {"nubo_transfer_progress_callback": "wrap_progress",
              "nubo_transfer_change_callback": "wrap_change"}
# A C enum without a C++ type of its own (marked enums are crate::enums'), as Rust names it
# (with its .raw()).
_RUST_ENUMS = {"nubo_codec": "crate::transfer::Codec", "nubo_dtype": "crate::DType",
               "nubo_reduce_op": "crate::ReduceOp", "nubo_update_rule": "crate::OptimizerKind",
               "nubo_loss_scaling": "crate::LossScaling",
               "nubo_symlinks": "crate::stores::Symlinks"}
_RUST_NUMBERS = {"int": "i32", "unsigned": "u32", "size_t": "usize", "uint16_t": "u16",
                 "uint32_t": "u32", "uint64_t": "u64", "int64_t": "i64", "float": "f32",
                 "double": "f64"}


def is_input(abi: Abi, s: Struct) -> bool:
    """A struct the caller fills: it has an _init that hands out the defaults."""
    return any(f.name == f"{s.name}_init" for f in abi.functions)


def options(abi: Abi) -> list[Struct]:
    out = [d for d in abi.order if isinstance(d, Struct) and d.cpp and is_input(abi, d)]
    for s in out:
        if not s.sized:
            raise HeaderError(f"{s.header}: the options {s.name} must begin with struct_size")
    return out


def _plan(abi: Abi, s: Struct) -> list[tuple[str, Field, list[str]]]:
    """Each C++ member's way in: (kind, the C field, the C fields it takes)."""
    fields = s.fields[1:]
    names = {f.name for f in fields}
    marked = {o.name for o in options(abi)}
    plan: list[tuple[str, Field, list[str]]] = []
    for f in fields:
        t = f.type
        where = f"{s.header}: {s.name}.{f.name}"
        if f.name.endswith("_count") and f.name[:-6] in names:
            continue  # the list's
        if f.name.endswith("_user") and f.name[:-5] in names:
            continue  # the callback's
        kind = abi.find(t.base)
        if t.base == "char" and len(t.pointers) == 2:
            if f"{f.name}_count" not in names:
                raise HeaderError(f"{where}: a list of strings needs its {f.name}_count")
            plan.append(("list", f, [f.name, f"{f.name}_count"]))
        elif t.base == "char" and len(t.pointers) == 1:
            plan.append(("string", f, [f.name]))
        elif isinstance(kind, Callback):
            if t.base not in _CALLBACKS or f"{f.name}_user" not in names:
                raise HeaderError(f"{where}: a callback needs its {f.name}_user and a wrapper "
                                  "in options.py's _CALLBACKS")
            plan.append(("callback", f, [f.name, f"{f.name}_user"]))
        elif len(t.pointers) == 1 and t.base in marked:
            plan.append(("extension", f, [f.name]))
        elif t.pointers or t.array:
            raise HeaderError(f"{where}: no C++ conversion for '{t}'")
        else:
            plan.append(("value", f, [f.name]))
    return plan


def _enum_takes(abi: Abi) -> list[str]:
    """take() of each marked C enum into its C++ enum: a value the C enum lacks is refused,
    naming the field and the values there are."""
    used = {f.type.base for s in options(abi) for f in s.fields}
    out = []
    for e in enums.marked(abi):
        if e.name in _CHECKED_BY_HAND or e.name not in used:
            continue
        cases = " ".join(f"case {name}:" for name, _ in e.constants)
        choices = ", ".join(f"{value} {name[len(enums.prefix(e)):].lower()}"
                            for name, value in e.constants)
        out += ["", f"inline void take({e.cpp}& out, {e.name} in, const std::string& what) {{",
                "  switch (in) {", f"    {cases}",
                f"      out = static_cast<{e.cpp}>(in);", "      return;", "    default:",
                "      throw Error(Errc::invalid_argument, what + \" is \" + "
                "std::to_string(static_cast<int>(in)) +",
                f'                  ": not a {e.name} ({choices})");', "  }", "}"]
    return out


def cpp(abi: Abi) -> str:
    out = [f"// {GENERATED}",
           "// The C option structs to and from their C++ types (capi/bindings/options.py).",
           "#pragma once", "", "#include <cstddef>", "#include <string>", "", '#include "nubo.h"',
           '#include "nubo/nubo.hpp"', '#include "option_fields.hpp"', "",
           "namespace nubo::capi {"] + _enum_takes(abi)
    for s in options(abi):
        plan = _plan(abi, s)
        out += ["", f"// The defaults of {s.name}: those of a default {s.cpp}.",
                f"inline {s.name} to_{s.name}(const {s.cpp}& in) {{",
                f"  {s.name} out{{}};", "  out.struct_size = sizeof out;"]
        for kind, f, _ in plan:
            member = s.field_cpp.get(f.name, f.name)
            if kind == "value":
                out.append(f"  assign(out.{f.name}, in.{member});")
            else:  # a pointer: NULL, which only an empty C++ default can be
                out.append(f'  assign_empty(in.{member}, "{s.cpp}::{member}");')
        out += ["  return out;", "}", "",
                f"// The caller's {s.name} (read with its struct_size) as {s.cpp}; `what` names "
                "it in errors.",
                f"inline {s.cpp} from_{s.name}(const {s.name}& in, const std::string& what) {{",
                f"  {s.cpp} out;"]
        for kind, f, fields in plan:
            what = f'what + "->{f.name}"'
            member = s.field_cpp.get(f.name, f.name)
            if kind == "value" or kind == "string":
                out.append(f"  take(out.{member}, in.{f.name}, {what});")
            elif kind == "list":
                out.append(f"  out.{f.name} = to_strings(in.{fields[0]}, in.{fields[1]}, "
                           f"({what}).c_str());")
            elif kind == "callback":
                out.append(f"  out.{f.name} = {_CALLBACKS[f.type.base]}(in.{fields[0]}, "
                           f"in.{fields[1]});")
            else:  # an extension
                ext = f.type.base
                out += [f"  if (in.{f.name} != nullptr) {{",
                        f"    const auto defaults = to_{ext}(decltype(out.{f.name}){{}});",
                        f"    out.{f.name} = from_{ext}(read_sized(*in.{f.name}, defaults, "
                        f"({what}).c_str(), \"{ext}_init()\"), {what});", "  }"]
        out += ["  return out;", "}", "",
                f"// {s.name}_init: the defaults, as much of them as the caller's struct holds.",
                f"inline void init_options({s.name}* out, std::size_t size) {{",
                f'  init_sized(to_{s.name}({{}}), out, size, "{s.name}");', "}", "",
                "// The caller's struct (NULL: the defaults) as C++; `what` is its parameter.",
                f"inline {s.cpp} read_options(const {s.name}* in, const char* what = "
                '"options") {',
                f"  auto o = to_{s.name}({{}});",
                f'  if (in != nullptr) o = read_sized(*in, o, what, "{s.name}_init()");',
                f"  return from_{s.name}(o, what);", "}"]
    out += ["", "}  // namespace nubo::capi", ""]
    return "\n".join(out)


# ---- Rust ---------------------------------------------------------------------------------


def _rust_name(s: Struct) -> str:
    return s.cpp.split("::")[-1]


def rust(abi: Abi) -> str:
    structs, seen = [], set()
    for s in options(abi):  # one Rust type per name: the first (a later one is an ABI alias)
        if _rust_name(s) not in seen:
            seen.add(_rust_name(s))
            structs.append(s)
    names = {s.name: _rust_name(s) for s in structs}
    out = ["//! The options of the C ABI as Rust values: `None` keeps the library's default.",
           "//!", "//! Generated by capi/bindings/generate.py from the C headers: do not edit.", "",
           "use std::os::raw::c_int;", "use std::path::PathBuf;", "",
           "use crate::fill::Keep;", "use crate::{check, ffi, Error};"]
    for s in structs:
        name = _rust_name(s)
        plan = [p for p in _plan(abi, s) if p[0] != "callback"]
        out += [""] + rust_doc(s.doc or f"Options ({s.name})", "")
        out += ["///", f"/// C: `{s.name}`.", "#[derive(Debug, Clone, Default)]",
                f"pub struct {name} {{"]
        fill = []
        for kind, f, fields in plan:
            out += rust_doc(field_doc(s, f))
            what = f.name
            if kind == "list":
                out.append(f"    pub {f.name}: Vec<String>,")
                fill.append(f'        (o.{fields[0]}, o.{fields[1]}) = keep.strings("{what}", '
                            f"&self.{f.name})?;")
            elif kind == "string":
                if re.search(r"_(file|dir|path)$", f.name):
                    out.append(f"    pub {f.name}: Option<PathBuf>,")
                    fill.append(f'        o.{f.name} = keep.path("{what}", '
                                f"self.{f.name}.as_deref())?;")
                else:
                    out.append(f"    pub {f.name}: Option<String>,")
                    fill.append(f'        o.{f.name} = keep.text("{what}", '
                                f"self.{f.name}.as_deref())?;")
            elif kind == "extension":
                ext = names[f.type.base]
                out.append(f"    pub {f.name}: {ext},")
                fill.append(f"        let {f.name} = self.{f.name}.to_raw(keep)?;")
                fill.append(f"        o.{f.name} = keep.extension({f.name});")
            else:
                t = f.type
                kind_of = abi.find(t.base)
                if isinstance(kind_of, Enum) and kind_of.cpp and t.base not in _RUST_ENUMS:
                    rust_type = f"crate::enums::{kind_of.cpp.split('::')[-1]}"
                    value = "v.raw()"
                elif isinstance(kind_of, Enum):
                    if t.base not in _RUST_ENUMS:
                        raise HeaderError(f"{s.header}: {s.name}.{f.name}: no Rust enum for "
                                          f"{t.base} in options.py's _RUST_ENUMS")
                    rust_type, value = _RUST_ENUMS[t.base], "v.raw()"
                elif is_flag(s, f):
                    rust_type, value = "bool", "c_int::from(v)"
                elif t.base in _RUST_NUMBERS:
                    rust_type, value = _RUST_NUMBERS[t.base], "v"
                else:
                    raise HeaderError(f"{s.header}: {s.name}.{f.name}: no Rust type for '{t}'")
                out.append(f"    pub {f.name}: Option<{rust_type}>,")
                fill.append(f"        if let Some(v) = self.{f.name} {{")
                fill.append(f"            o.{f.name} = {value};")
                fill.append("        }")
        # Options of plain values only hold nothing for the call: the parameter stays unused.
        keep = "keep" if any("keep" in line for line in fill) else "_keep"
        out += ["}", "", f"impl {name} {{",
                "    /// The C struct: the library's defaults, then what is set here.",
                f"    pub(crate) fn to_raw(&self, {keep}: &mut Keep) -> "
                f"Result<ffi::{s.name}, Error> {{",
                f"        let mut o = ffi::{s.name}::new();",
                "        // SAFETY: `o` is a valid struct of the size given.",
                f"        check(unsafe {{ ffi::{s.name}_init(&mut o, std::mem::size_of_val(&o)) "
                "})?;"]
        out += fill
        out += ["        Ok(o)", "    }", "}"]
    return "\n".join(out) + "\n"
