#!/usr/bin/env python3
"""Writes the bindings' mirrors of the C ABI from its headers, so that nothing hand-written
restates a struct, a constant or a function signature:

    generate.py write        capi/python/nubo/_abi.py (ctypes structs, constants, callback
                             prototypes, every function's signature) and capi/rust/src/ffi.rs
                             (the same as Rust declarations, with their layout test); and the
                             result structs (results.py): Python's dataclasses
                             (nubo/_results.py), Rust's owned structs (src/results.rs) and the
                             C++ -> C conversions of capi/src (src/generated/results.hpp); the
                             options structs' conversions both ways (options.py,
                             src/generated/options.hpp); the collectives' entry points
                             (collectives.py: src/generated/collectives.cpp,
                             nubo/_collectives.py, src/collectives.rs)
    generate.py check        regenerates into memory and fails, naming the file, when the
                             checked-in mirror differs from what the headers say; exits 77
                             when rustfmt is missing and the Rust mirror went unchecked
    generate.py layout OUT   a C program printing every struct's size, every field's offset
                             and size and every constant as the C compiler sees them, which
                             the Python and Rust tests compare their mirrors with
    generate.py stubs OPTION OUT HEADER...
                             the entry points the headers declare, each answering
                             NUBO_ERR_UNSUPPORTED (naming the CMake OPTION that is off), for
                             a library built without that capability

A field added to a C header reaches Python and Rust by running `make bindings` (which runs
this), and CTest's bindings:generated fails until that is done.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

from c_header import (Abi, Callback, Constant, CType, Enum, External, Function, HeaderError,
                      Opaque, Struct, read_abi)
from conventions import check_conventions
import collectives
import enums
import options
import results

ROOT = Path(__file__).resolve().parents[2]
CAPI, INCLUDE = ROOT / "capi", ROOT / "include"
PYTHON_OUT = CAPI / "python" / "nubo" / "_abi.py"
RUST_OUT = CAPI / "rust" / "src" / "ffi.rs"
CPP_RESULTS = CAPI / "src" / "generated" / "results.hpp"
CPP_OPTIONS = CAPI / "src" / "generated" / "options.hpp"
CPP_COLLECTIVES = CAPI / "src" / "generated" / "collectives.cpp"
PYTHON_COLLECTIVES = CAPI / "python" / "nubo" / "_collectives.py"
RUST_COLLECTIVES = CAPI / "rust" / "src" / "collectives.rs"
PYTHON_RESULTS = CAPI / "python" / "nubo" / "_results.py"
RUST_RESULTS = CAPI / "rust" / "src" / "results.rs"
RUST_OPTIONS = CAPI / "rust" / "src" / "options.rs"
PYTHON_ENUMS = CAPI / "python" / "nubo" / "_enums.py"
RUST_ENUMS = CAPI / "rust" / "src" / "enums.rs"

# ---- Python (ctypes) ---------------------------------------------------------------------

_PY_SCALARS = {
    "int": "c_int", "unsigned": "c_uint", "float": "c_float", "double": "c_double",
    "size_t": "c_size_t", "uint16_t": "c_uint16", "uint32_t": "c_uint32",
    "uint64_t": "c_uint64", "int64_t": "c_int64",
}


def py_type(t: CType, abi: Abi, where: str, parameter: bool = False) -> str:
    if t.array:
        return f"({py_type(CType(t.base, t.const), abi, where)} * {t.array[0]})"
    kind = abi.find(t.base)
    if not t.pointers:
        if t.base == "void":
            return "None"
        if t.base in _PY_SCALARS:
            return _PY_SCALARS[t.base]
        if isinstance(kind, Enum):
            return "c_int"
        if isinstance(kind, (Callback, Struct, Opaque)):
            return t.base  # by value for a struct; an opaque one only behind a pointer
        raise HeaderError(f"{where}: no ctypes mirror for '{t}'")
    inner = CType(t.base, t.const, t.pointers[:-1])
    if len(t.pointers) == 1:
        if t.base == "char":
            # A string the library reads (or returns) is c_char_p; a buffer it writes into is
            # c_void_p, which takes both None and create_string_buffer().
            return "c_char_p" if t.const or not parameter else "c_void_p"
        if t.base == "void" or isinstance(kind, External):
            return "c_void_p"
    if t.base == "char" and len(t.pointers) == 2:
        return "POINTER(c_char_p)"
    if isinstance(kind, External) or t.base == "void":
        return "POINTER(c_void_p)" if len(t.pointers) == 2 else "c_void_p"
    return f"POINTER({py_type(inner, abi, where)})"


def python(abi: Abi) -> str:
    out = [
        '"""nubo\'s C ABI (capi/nubo.h and the headers it includes) as ctypes declarations.',
        "",
        "Generated by capi/bindings/generate.py from the headers: do not edit. Change the header",
        "and run `make bindings`; CTest's bindings:generated fails while the two differ.",
        '"""',
        "",
        "# flake8: noqa",
        "from __future__ import annotations",
        "",
        "import ctypes",
        "from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_float, c_int,",
        "                    c_int64, c_size_t, c_uint, c_uint16, c_uint32, c_uint64, c_void_p)",
        "from typing import Any, Optional",
        "",
        f"NUBO_ABI_VERSION = {abi.abi_version}",
        "",
        "",
        "class Sized(Structure):",
        '    """A struct that begins with `uint32_t struct_size`, set here to this mirror\'s size.',
        "",
        "    nubo reads and writes only the bytes struct_size covers, which is what keeps this",
        '    package working with a newer library whose structs have grown."""',
        "",
        "    def __init__(self, *args: Any, **kwargs: Any) -> None:",
        "        super().__init__(*args, **kwargs)",
        "        self.struct_size = ctypes.sizeof(self)",
        "",
    ]
    for item in abi.order:
        if isinstance(item, Enum):
            out += ["", f"# {item.name} ({item.header})"]
            out += [f"{name} = {value}" for name, value in item.constants]
        elif isinstance(item, Constant):
            out += ["", f"{item.name} = {item.value}  # {item.header}"]
        elif isinstance(item, Opaque):
            out += ["", "", f"class {item.name}(Structure):",
                    '    """Opaque: used through pointers."""']
        elif isinstance(item, Struct):
            base = "Sized" if item.sized else "Structure"
            out += ["", "", f"class {item.name}({base}):", "    _fields_ = ["]
            for f in item.fields:
                where = f"{item.header}: {item.name}.{f.name}"
                out.append(f'        ("{f.name}", {py_type(f.type, abi, where)}),')
            out.append("    ]")
        elif isinstance(item, Callback):
            where = f"{item.header}: {item.name}"
            types = [py_type(item.result, abi, where)]
            types += [py_type(p.type, abi, where, True) for p in item.parameters]
            out += ["", "", f"{item.name} = CFUNCTYPE({', '.join(types)})"]
    out += ["", "", "# Every function: name -> (result, parameters).",
            "FUNCTIONS: dict[str, tuple[Optional[type], list[Any]]] = {"]
    for f in abi.functions:
        where = f"{f.header}: {f.name}"
        result = py_type(f.result, abi, where)
        params = ", ".join(py_type(p.type, abi, where, True) for p in f.parameters)
        line = f'    "{f.name}": ({result}, [{params}]),'
        if len(line) > 99:
            line = f'    "{f.name}": (\n        {result}, [{params}]),'
        out.append(line)
    out += ["}", ""]
    return "\n".join(out)



# ---- Rust (extern "C") ---------------------------------------------------------------------

_RUST_SCALARS = {
    "int": "c_int", "unsigned": "c_uint", "float": "c_float", "double": "c_double",
    "size_t": "usize", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64", "int64_t": "i64",
    "char": "c_char", "void": "c_void",
}
_RUST_KEYWORDS = {"fn", "in", "type", "ref", "match", "move", "mod", "use", "loop", "impl",
                  "self", "struct", "enum", "const", "static", "where", "box", "dyn"}


def rust_type(t: CType, abi: Abi, where: str) -> str:
    if t.array:
        return f"[{rust_type(CType(t.base, t.const), abi, where)}; {t.array[0]}]"
    kind = abi.find(t.base)
    if isinstance(kind, External):
        base = "c_void"  # a type of another library (DLPack): an untyped pointer here
    elif t.base in _RUST_SCALARS:
        base = _RUST_SCALARS[t.base]
    elif isinstance(kind, (Enum, Struct, Opaque, Callback)):
        base = t.base
    else:
        raise HeaderError(f"{where}: no Rust mirror for '{t}'")
    if not t.pointers:
        if t.base == "void":
            raise HeaderError(f"{where}: void by value")
        return base
    # Read from the innermost pointer out: `const char* const*` is *const *const c_char.
    text = base
    consts = [t.const] + list(t.pointers[:-1])
    for const in consts:
        text = ("*const " if const else "*mut ") + text
    return text


def _rust_name(name: str) -> str:
    return "r#" + name if name in _RUST_KEYWORDS else name


def _rust_signature(parameters: list, result: CType, abi: Abi, where: str) -> tuple[str, str]:
    params = ", ".join(f"{_rust_name(p.name)}: {rust_type(p.type, abi, where)}"
                       for p in parameters)
    ret = "" if result.base == "void" and not result.pointers else \
        f" -> {rust_type(result, abi, where)}"
    return params, ret


def rust(abi: Abi) -> str:
    out = [RUST_PREAMBLE.replace("@ABI_VERSION@", str(abi.abi_version))]
    for item in abi.order:
        if isinstance(item, Enum):
            out += ["", f"pub type {item.name} = c_int;"]
            out += [f"pub const {name}: {item.name} = {value};" for name, value in item.constants]
        elif isinstance(item, Constant):
            out += ["", f"pub const {item.name}: usize = {item.value};"]
        elif isinstance(item, (Opaque, External)):
            out += ["", f"opaque!({item.name});"]
        elif isinstance(item, Struct):
            out += ["", "sized_structs! {", f"    pub struct {item.name} {{"]
            for f in item.fields:
                where = f"{item.header}: {item.name}.{f.name}"
                out.append(f"        pub {_rust_name(f.name)}: {rust_type(f.type, abi, where)},")
            out += ["    }", "}"]
        elif isinstance(item, Callback):
            where = f"{item.header}: {item.name}"
            params, ret = _rust_signature(item.parameters, item.result, abi, where)
            out += ["", f'pub type {item.name} = Option<unsafe extern "C" fn({params}){ret}>;']
    out += ["", 'extern "C" {']
    for f in abi.functions:
        params, ret = _rust_signature(f.parameters, f.result, abi, f"{f.header}: {f.name}")
        out.append(f"    pub fn {f.name}({params}){ret};")
    out += ["}", ""]
    # The layout test: every struct, field and constant, against the C compiler's.
    layout_lines = []
    for st in abi.structs:
        head = f"            {st.name} {{ "
        body = textwrap.wrap(", ".join(_rust_name(f.name) for f in st.fields) + " }",
                             width=100 - len(head))
        layout_lines.append(head + ("\n" + " " * len(head)).join(body))
    enums = ", ".join(f'"{e.name}"' for e in abi.enums)
    names = [c for e in abi.enums for c, _ in e.constants] + [c.name for c in abi.constants]
    constants = ",\n".join(f"            {c}" for c in names)
    out.append(RUST_TESTS.replace("@LAYOUT@", "\n".join(layout_lines))
               .replace("@ENUMS@", enums).replace("@CONSTANTS@", constants))
    return "\n".join(out)


RUST_PREAMBLE = """//! Raw declarations of nubo's C ABI (`capi/nubo.h` and the headers it includes).
//!
//! Generated by capi/bindings/generate.py from the headers: do not edit. Change the header and
//! run `make bindings` (then `cargo fmt`); CTest's bindings:generated fails while the two
//! differ, and the test at the bottom compares every struct, field and constant with what the
//! C compiler makes of the headers.
//!
//! C enums are declared as `c_int` plus constants rather than as Rust enums: a newer library may
//! return a value this file does not know, which would be undefined behaviour in a Rust enum.

#![allow(non_camel_case_types)]

use std::marker::{PhantomData, PhantomPinned};
#[allow(unused_imports)]
use std::os::raw::{c_char, c_double, c_float, c_int, c_uint, c_void};

/// `NUBO_ABI_VERSION` of the headers these declarations come from.
pub const NUBO_ABI_VERSION: c_int = @ABI_VERSION@;

/// Declares `#[repr(C)]` structs that begin with `uint32_t struct_size`, each with a `new()`
/// that zeroes it (a valid value: integers, doubles and NULL pointers) and sets `struct_size`,
/// which is how nubo knows how many fields the caller has.
macro_rules! sized_structs {
    ($($(#[$meta:meta])* pub struct $name:ident { $(pub $field:ident: $ty:ty,)* })*) => {$(
        $(#[$meta])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy)]
        pub struct $name { $(pub $field: $ty,)* }

        impl $name {
            pub fn new() -> Self {
                // SAFETY: every field is an integer, a double, a raw pointer or an optional
                // function pointer, for which all bits zero is a valid value (0, 0.0, NULL).
                let mut value: Self = unsafe { std::mem::zeroed() };
                value.struct_size = std::mem::size_of::<Self>() as u32;
                value
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }
    )*};
}

/// An opaque C type, only ever behind a pointer (the Rustonomicon's pattern: not
/// constructible, not Send/Sync/Unpin by itself).
macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}"""

RUST_TESTS = """#[cfg(test)]
mod tests {
    //! Compares the declarations above with the C compiler's view of the headers, printed by
    //! the program that $NUBO_TEST_LAYOUT names (generated from the headers); skipped without
    //! it. It checks this generator's mapping of C types to Rust ones.

    use super::*;
    use std::collections::HashMap;
    use std::mem::{size_of, MaybeUninit};

    fn pointee_size<T>(_: *const T) -> usize {
        size_of::<T>()
    }

    /// (offset, size) of a field, without offset_of! (Rust 1.77) to keep the MSRV.
    macro_rules! field {
        ($map:ident, $t:ident, $f:ident) => {{
            let value = MaybeUninit::<$t>::uninit();
            let base = value.as_ptr();
            // SAFETY: addr_of! takes the field's address without reading it or making a
            // reference, which is sound on uninitialised memory.
            let field = unsafe { std::ptr::addr_of!((*base).$f) };
            let offset = field as usize - base as usize;
            $map.insert(
                format!("{} {}", stringify!($t), stringify!($f)),
                (offset, pointee_size(field)),
            );
        }};
    }

    macro_rules! layout {
        ($($t:ident { $($f:ident),* })*) => {{
            let mut structs = HashMap::new();
            let mut fields = HashMap::new();
            $(
                structs.insert(stringify!($t).to_string(), size_of::<$t>());
                $(field!(fields, $t, $f);)*
            )*
            (structs, fields)
        }};
    }

    macro_rules! constants {
        ($($c:ident),*) => {{
            let mut map = HashMap::new();
            $(map.insert(stringify!($c).to_string(), $c as i64);)*
            map
        }};
    }

    #[test]
    fn layout_matches_c() {
        let program = match std::env::var_os("NUBO_TEST_LAYOUT") {
            Some(program) => program,
            None => {
                eprintln!("NUBO_TEST_LAYOUT is not set: layout check skipped");
                return;
            }
        };
        let output = std::process::Command::new(&program)
            .output()
            .expect("run the layout program");
        assert!(output.status.success(), "{:?} failed", program);

        let (mut structs, fields) = layout! {
@LAYOUT@
        };
        // Enums travel as C ints.
        for name in [@ENUMS@] {
            structs.insert(name.to_string(), size_of::<c_int>());
        }
        let constants = constants!(
            NUBO_ABI_VERSION,
@CONSTANTS@
        );

        let text = String::from_utf8(output.stdout).expect("UTF-8");
        let mut checked = 0;
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let number = |i: usize| -> i64 { words[i].parse().expect("a number") };
            match words[0] {
                "struct" => {
                    let size = structs
                        .get(words[1])
                        .unwrap_or_else(|| panic!("{line}: not mirrored"));
                    assert_eq!(*size as i64, number(2), "{line}");
                }
                "field" => {
                    let key = format!("{} {}", words[1], words[2]);
                    let (offset, size) = fields
                        .get(&key)
                        .unwrap_or_else(|| panic!("{line}: not mirrored"));
                    assert_eq!(
                        (*offset as i64, *size as i64),
                        (number(3), number(4)),
                        "{line}"
                    );
                }
                "const" => {
                    let value = constants
                        .get(words[1])
                        .unwrap_or_else(|| panic!("{line}: not mirrored"));
                    assert_eq!(*value, number(2), "{line}");
                }
                other => panic!("unexpected line kind {other:?}"),
            }
            checked += 1;
        }
        assert!(checked > 400, "only {checked} lines from the layout program");
    }
}
"""

# ---- The layout printer (C) ---------------------------------------------------------------

def layout(abi: Abi) -> str:
    out = [
        "/* Generated by capi/bindings/generate.py from the C headers: every struct's size, every",
        " * field's offset and size, every constant, as the C compiler lays them out. Lines:",
        " *   struct <name> <size>   (enums too: they travel as C ints)",
        " *   field <struct> <field> <offset> <size>",
        " *   const <NAME> <value> */",
        "#include <stddef.h>",
        "#include <stdio.h>",
        "",
        '#include "nubo.h"',
        "",
        '#define STRUCT(s) printf("struct %s %zu\\n", #s, sizeof(s))',
        '#define FIELD(s, f) \\',
        '  printf("field %s %s %zu %zu\\n", #s, #f, offsetof(s, f), sizeof(((s*)0)->f))',
        '#define CONST(c) printf("const %s %lld\\n", #c, (long long)(c))',
        "",
        "int main(void) {",
        "  CONST(NUBO_ABI_VERSION);",
    ]
    for item in abi.order:
        if isinstance(item, Enum):
            out.append(f"  STRUCT({item.name});")
            out += [f"  CONST({name});" for name, _ in item.constants]
        elif isinstance(item, Struct):
            out.append(f"  STRUCT({item.name});")
            out += [f"  FIELD({item.name}, {f.name});" for f in item.fields]
        elif isinstance(item, Constant):
            out.append(f"  CONST({item.name});")
    out += ["  return 0;", "}", ""]
    return "\n".join(out)


# ---- Stubs of a capability built without (C++) -----------------------------------------------

def _stub_result(f: Function) -> str:
    """What a stub returns: the error for a status, else what the header says NULL gives."""
    t = f.result
    if t.base == "void" and not t.pointers:
        return ""
    if t.base == "nubo_status" and not t.pointers:
        return "nubo::capi::unsupported(__func__, OPTION)"
    if t.pointers:
        return "nullptr"
    return "1" if f.name.endswith("_done") else "0"  # "1 for NULL": no handle can exist


def stubs(abi: Abi, option: str, headers: list[str]) -> str:
    out = [f"// Generated by capi/bindings/generate.py: the entry points of {', '.join(headers)}",
           f"// for a library built with {option}=OFF. Each answers NUBO_ERR_UNSUPPORTED, so the",
           "// ABI keeps every symbol whatever was built.",
           '#include "guard.hpp"',
           '#include "nubo.h"',
           "",
           f'static constexpr const char* OPTION = "{option}";',
           "",
           'extern "C" {']
    functions = [f for f in abi.functions if f.header in headers]
    if not functions:
        raise HeaderError(f"stubs: {', '.join(headers)} declare no function")
    for f in functions:
        params = ", ".join(str(p.type) for p in f.parameters) or "void"
        result = _stub_result(f)
        body = f" return {result}; " if result else " "
        out += ["", f"NUBO_C_API {f.result} {f.name}({params}) {{{body}}}"]
    out += ["", '}  // extern "C"', ""]
    return "\n".join(out)


# ---- Entry point ---------------------------------------------------------------------------

def rustfmt() -> Optional[str]:
    """rustfmt, as cargo fmt runs it: $NUBO_RUSTFMT, PATH, or rustup's ~/.cargo/bin."""
    candidates = [os.environ.get("NUBO_RUSTFMT"), shutil.which("rustfmt"),
                  str(Path.home() / ".cargo" / "bin" / "rustfmt")]
    return next((c for c in candidates if c and Path(c).is_file()), None)


def formatted_rust(text: str) -> Optional[str]:
    """The Rust declarations as `cargo fmt` leaves them, or None without rustfmt."""
    program = rustfmt()
    if program is None:
        return None
    done = subprocess.run([program, "--edition", "2021", "--emit", "stdout"], input=text,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise HeaderError(f"rustfmt refused the generated Rust: {done.stderr[-2000:]}")
    return done.stdout


def formatted_cpp(text: str) -> Optional[str]:
    """`text` as clang-format lays it out with the repository's style; None without it."""
    program = shutil.which("clang-format")
    if program is None:
        return None
    done = subprocess.run([program, f"--assume-filename={CPP_RESULTS}"], input=text,
                          capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise HeaderError(f"clang-format refused the generated C++: {done.stderr[-2000:]}")
    return done.stdout


def mirrors(abi: Abi) -> dict[Path, str]:
    """The checked-in mirrors as the headers make them; the Rust ones only where rustfmt is,
    the C++ one only where clang-format is."""
    outputs = {PYTHON_OUT: python(abi), PYTHON_RESULTS: results.python(abi),
               PYTHON_ENUMS: enums.python(abi), PYTHON_COLLECTIVES: collectives.python(abi)}
    for path, text, formatted in ((RUST_OUT, rust(abi), formatted_rust),
                                  (RUST_RESULTS, results.rust(abi), formatted_rust),
                                  (RUST_OPTIONS, options.rust(abi), formatted_rust),
                                  (RUST_ENUMS, enums.rust(abi), formatted_rust),
                                  (CPP_RESULTS, results.cpp(abi), formatted_cpp),
                                  (CPP_OPTIONS, options.cpp(abi), formatted_cpp),
                                  (RUST_COLLECTIVES, collectives.rust(abi), formatted_rust),
                                  (CPP_COLLECTIVES, collectives.cpp(abi), formatted_cpp)):
        done = formatted(text)
        if done is None:
            print(f"generate.py: no formatter: {path.relative_to(ROOT)} is left as it is",
                  file=sys.stderr)
        else:
            outputs[path] = done
    return outputs


def main(argv: list[str]) -> int:
    command = argv[1:]
    if command not in (["write"], ["check"]) and not (len(command) == 2 and
                                                      command[0] == "layout") and \
            not (len(command) >= 4 and command[0] == "stubs"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        abi = read_abi(CAPI, INCLUDE)
        check_conventions(abi)
        if command[0] == "layout":  # a build step: no mirror is written, so no rustfmt
            Path(command[1]).write_text(layout(abi))
            return 0
        if command[0] == "stubs":  # a build step too
            Path(command[2]).write_text(stubs(abi, command[1], command[3:]))
            return 0
        outputs = mirrors(abi)
    except HeaderError as e:
        print(f"generate.py: {e}", file=sys.stderr)
        return 1
    if command == ["write"]:
        for path, text in outputs.items():
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
        return 0
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text() != text]
    for path in stale:
        print(f"{path.relative_to(ROOT)} differs from what capi/*.h declare: run "
              "`make bindings` and commit the result", file=sys.stderr)
    if stale:
        return 1
    # A mirror went unchecked without its formatter: 77, which ctest reports as skipped.
    return 0 if RUST_OUT in outputs and CPP_RESULTS in outputs else 77


if __name__ == "__main__":
    sys.exit(main(sys.argv))
