"""The public entry points of the collectives in every language, from their C declarations.

A worker function with an asynchronous twin is a collective:

    nubo_status nubo_worker_X(nubo_worker* worker, PARAMETERS);
    nubo_status nubo_worker_X_async(nubo_worker* worker, PARAMETERS, nubo_pending** out);

Its parameters are buffers (`const nubo_buffer*` read, `nubo_buffer*` written), a reduce op
and an int (the root). For each one this writes
  - both C entry points (capi/src/generated/collectives.cpp), calling Worker::X and
    Worker::X_async of the C++ API with the arguments checked;
  - Python's Worker.X and Worker.X_async (nubo/_collectives.py, a base of Worker), whose buffers
    are anything Worker takes as an operand (a Buffer, a NumPy array, a DLPack tensor), an op
    "sum" by default and a root 0;
  - Rust's Worker::X and Worker::X_async (src/collectives.rs), an async one borrowing its
    buffers until its Pending is waited for.
A new collective is then its C++ file, its row in the collectives table, its two C declarations
and its test.
"""

from __future__ import annotations

from dataclasses import dataclass

from c_header import Abi, Function, HeaderError
from doc_text import GENERATED

# Parameter names that are keywords in Python or Rust.
_PYTHON_NAMES = {"in": "inp"}
_RUST_NAMES = {"in": "input"}


@dataclass
class Parameter:
    name: str
    kind: str  # "read" or "write" (a buffer), "op", "int"


@dataclass
class Collective:
    name: str  # "all_reduce"
    parameters: list[Parameter]
    sync: Function
    asynchronous: Function


def _parameter(f: Function, index: int) -> Parameter:
    p = f.parameters[index]
    where = f"{f.header}: {f.name}({p.name})"
    if p.type.base == "nubo_buffer" and len(p.type.pointers) == 1:
        return Parameter(p.name, "read" if p.type.const else "write")
    if p.type.base == "nubo_reduce_op" and not p.type.pointers:
        return Parameter(p.name, "op")
    if p.type.base == "int" and not p.type.pointers:
        return Parameter(p.name, "int")
    raise HeaderError(f"{where}: a collective takes buffers, a reduce op and ints only")


def collectives(abi: Abi) -> list[Collective]:
    functions = {f.name: f for f in abi.functions}
    out = []
    for f in abi.functions:
        twin = functions.get(f"{f.name}_async")
        if not f.name.startswith("nubo_worker_") or twin is None:
            continue
        params = [_parameter(f, i) for i in range(1, len(f.parameters))]
        last = twin.parameters[-1].type
        if (len(twin.parameters) != len(f.parameters) + 1 or last.base != "nubo_pending" or
                len(last.pointers) != 2 or
                [str(p.type) for p in twin.parameters[:-1]] != [str(p.type) for p in f.parameters]):
            raise HeaderError(f"{twin.header}: {twin.name} must take {f.name}'s parameters and "
                              "then nubo_pending** out")
        out.append(Collective(f.name[len("nubo_worker_"):], params, f, twin))
    return out


# ---- C ------------------------------------------------------------------------------------


def _cpp_argument(p: Parameter) -> str:
    if p.kind in ("read", "write"):
        return f'require_buffer({p.name}, "{p.name}")'
    return f"to_op({p.name})" if p.kind == "op" else p.name


def cpp(abi: Abi) -> str:
    out = [f"// {GENERATED}", "// The collectives' C entry points (capi/bindings/collectives.py).",
           '#include "nubo_parallel.h"', '#include "parallel_handles.hpp"', "",
           "using namespace nubo::capi;", "", 'extern "C" {']
    for c in collectives(abi):
        args = ", ".join(_cpp_argument(p) for p in c.parameters)
        params = ", ".join(f"{p.type} {p.name}" for p in c.sync.parameters)
        pending = c.asynchronous.parameters[-1].name
        out += ["", f"NUBO_C_API nubo_status {c.sync.name}({params}) {{",
                f'  return guard("{c.sync.name}", [&] {{ require_worker(worker).{c.name}({args}); '
                "});", "}", "",
                f"NUBO_C_API nubo_status {c.asynchronous.name}({params}, nubo_pending** {pending}) "
                "{", f'  return guard("{c.asynchronous.name}", [&] {{',
                f'    *require({pending}, "{pending}") = nullptr;',
                f"    give(require_worker(worker).{c.name}_async({args}), {pending});", "  });",
                "}"]
    out += ["", '}  // extern "C"', ""]
    return "\n".join(out)


# ---- Python -------------------------------------------------------------------------------


def python(abi: Abi) -> str:
    out = ['"""The collectives of a Worker, every rank calling the same ones in the same order.',
           "", GENERATED, '"""', "", "from __future__ import annotations", "",
           "from typing import Any", "", "from . import _lib", "", "",
           "class Collectives:",
           '    """Worker\'s collectives: nubo_parallel.h says what each does. Buffers are any',
           "    operand of the worker (a Buffer, a NumPy array, a DLPack tensor); an op is a",
           '    ReduceOp or its name ("sum", "avg", "max", "min")."""']
    for c in collectives(abi):
        names = [_PYTHON_NAMES.get(p.name, p.name) for p in c.parameters]
        params, before, args, buffers = [], [], [], []
        for n, p in zip(names, c.parameters):
            if p.kind == "op":
                params.append(f'{n}: Any = "sum"')
                before.append(f"{n}_ = int(self._op({n}))")
                args.append(f"{n}_")
            elif p.kind == "int":
                params.append(f"{n}: int = 0")
                args.append(n)
            else:
                params.append(f"{n}: Any")
                args.append(f"h{len(buffers)}")
                buffers.append(n)
        signature = ", ".join(["self"] + params)
        handles = [f"h{i}" for i in range(len(buffers))]
        for suffix, function, extra, result in (("", c.sync, [], "None"),
                                                ("_async", c.asynchronous, ["p"], "Any")):
            call = ", ".join(["self._handle"] + args + extra)
            lam = f"lambda {', '.join(handles + extra) or '*_'}: c.{function.name}({call})"
            run = "return self._pending" if suffix else "self._call"
            out += ["", f"    def {c.name}{suffix}({signature}) -> {result}:"]
            if suffix:
                out.append(f'        """{c.name} started: the Pending returned waits for it."""')
            out.append("        c = _lib.lib()")
            out += [f"        {b}" for b in before]
            out += [f"        {run}(", f"            {lam},",
                    f"            {', '.join(buffers)})" if buffers else "        )"]
            if not buffers:
                out[-2] = out[-2].rstrip(",")
    for line in out:
        if len(line) > 100:
            raise HeaderError(f"collectives.py: a generated line is too long: {line}")
    return "\n".join(out) + "\n"


# ---- Rust ---------------------------------------------------------------------------------


def rust(abi: Abi) -> str:
    out = ["//! The collectives of a [`Worker`]: every rank calls the same ones, in the same order.",
           "//! nubo_parallel.h says what each does.", "//!", f"//! {GENERATED}", "",
           "use std::ptr;", "", "use crate::parallel::{Buffer, Pending, ReduceOp, Worker};",
           "use crate::{check, ffi, Error};", "", "impl Worker<'_> {"]
    for c in collectives(abi):
        names = [_RUST_NAMES.get(p.name, p.name) for p in c.parameters]
        sync_params, async_params, args = [], [], []
        for n, p in zip(names, c.parameters):
            if p.kind == "read":
                sync_params.append(f"{n}: &Buffer")
                async_params.append(f"{n}: &'b Buffer")
                args.append(f"{n}.raw()")
            elif p.kind == "write":
                sync_params.append(f"{n}: &mut Buffer")
                async_params.append(f"{n}: &'b mut Buffer")
                args.append(f"{n}.raw()")
            elif p.kind == "op":
                sync_params.append(f"{n}: ReduceOp")
                async_params.append(f"{n}: ReduceOp")
                args.append(f"{n}.raw()")
            else:
                sync_params.append(f"{n}: i32")
                async_params.append(f"{n}: i32")
                args.append(n)
        call = ", ".join(["self.raw()"] + args)
        out += [f"    /// The {c.name.replace('_', '-')} collective (`{c.sync.name}`).",
                f"    pub fn {c.name}(&self, {', '.join(sync_params)}) -> Result<(), Error> {{",
                "        // SAFETY: a live worker and buffers.",
                f"        check(unsafe {{ ffi::{c.sync.name}({call}) }})", "    }", "",
                f"    /// [`Worker::{c.name}`] started: its buffers stay borrowed until the "
                "[`Pending`] is", "    /// waited for (or dropped, which waits).",
                f"    pub fn {c.name}_async<'b>(&self, {', '.join(async_params)}) -> "
                "Result<Pending<'b>, Error> {", "        let mut raw = ptr::null_mut();",
                "        // SAFETY: a live worker and buffers, borrowed by the Pending.",
                f"        check(unsafe {{ ffi::{c.asynchronous.name}({call}, &mut raw) }})?;",
                "        Pending::started(raw)", "    }", ""]
    out += ["}", ""]
    return "\n".join(out).replace("(&self, )", "(&self)")
