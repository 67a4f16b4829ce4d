"""Reads nubo's C headers (capi/nubo.h and the capability headers it includes) into a model of
the ABI: enums with their constants, structs with their fields, opaque handles, callback types
and functions, in the order the C compiler meets them.

The headers keep to a small part of C, which this reader accepts and nothing more: anything
else is an error naming the file and the declaration, so a header change that the bindings
cannot follow stops the generator instead of producing a wrong mirror.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union


@dataclass(frozen=True)
class CType:
    """A C type as the bindings need it: its base name, the const-ness of the base, and the
    pointer levels from the innermost out, each with its own const (`const char* const*` is
    base char, const, pointers (True, False): a pointer to a const pointer to const chars)."""

    base: str
    const: bool = False
    pointers: tuple[bool, ...] = ()
    # A field `uint64_t counts[NUBO_X]`: the length's name (a constant) and value; else None.
    array: Optional[tuple[str, int]] = None

    def __str__(self) -> str:
        text = ("const " if self.const else "") + self.base
        for const in self.pointers:
            text += "*" + (" const" if const else "")
        return text + (f"[{self.array[0]}]" if self.array else "")


@dataclass
class Field:
    name: str
    type: CType


@dataclass
class Struct:
    name: str
    fields: list[Field]
    header: str
    # From the header's comments: "(C++: nubo::ns::Type)" before the struct names the C++ type a
    # result struct is made from; its comment and each field's become the bindings' docs.
    cpp: Optional[str] = None
    doc: str = ""
    field_docs: dict[str, str] = field(default_factory=dict)
    # "(C++: time.total_s())" ending a field's comment: the C++ expression the field is made
    # from, a member path or a getter of the struct's C++ value (`in.` is added unless the
    # expression names `in` itself); without it, the C++ member of the field's name.
    field_cpp: dict[str, str] = field(default_factory=dict)

    @property
    def sized(self) -> bool:
        """Begins with `uint32_t struct_size`: the caller says how much of it it knows."""
        return bool(self.fields) and self.fields[0].name == "struct_size"


@dataclass
class Enum:
    name: str
    constants: list[tuple[str, int]]
    header: str
    # As a struct's: "(C++: nubo::ns::Type)" above it marks an enum the bindings mirror as a type
    # of their own; its comment and each enumerator's become their docs.
    cpp: Optional[str] = None
    doc: str = ""
    value_docs: dict[str, str] = field(default_factory=dict)
    # "(C++: automatic)" ending an enumerator's comment: its C++ name, where it is not the
    # constant's suffix in lower case (NUBO_CODEC_ZSTD -> zstd).
    value_cpp: dict[str, str] = field(default_factory=dict)


@dataclass
class Constant:
    """`#define NUBO_X 8` in a header: a number the ABI fixes, such as an array's length."""

    name: str
    value: int
    header: str


@dataclass
class Callback:
    name: str
    result: CType
    parameters: list[Field]
    header: str


@dataclass
class Function:
    name: str
    result: CType
    parameters: list[Field]
    header: str


@dataclass
class Opaque:
    """A handle type: `typedef struct nubo_x nubo_x;`, used only through pointers."""

    name: str


@dataclass
class External:
    """A struct another library declares (DLPack's), named only behind pointers."""

    name: str


Declaration = Union[Enum, Struct, Opaque, External, Callback, Constant]


@dataclass
class Abi:
    abi_version: int = 0
    functions: list[Function] = field(default_factory=list)
    # Every type in declaration order: what an emitter walks, since each may use the earlier.
    order: list[Declaration] = field(default_factory=list)

    @property
    def enums(self) -> list[Enum]:
        return [d for d in self.order if isinstance(d, Enum)]

    @property
    def structs(self) -> list[Struct]:
        return [d for d in self.order if isinstance(d, Struct)]

    @property
    def constants(self) -> list[Constant]:
        return [d for d in self.order if isinstance(d, Constant)]

    def find(self, name: str) -> Optional[Declaration]:
        return next((d for d in self.order if d.name == name), None)


class HeaderError(ValueError):
    pass


_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_CPLUSPLUS_OPEN = re.compile(r'#ifdef __cplusplus\s*extern "C" \{\s*#endif')
_CPLUSPLUS_CLOSE = re.compile(r"#ifdef __cplusplus\s*\}\s*#endif")
_INCLUDE = re.compile(r'#include "([^"]+)"')
_IDENT = r"[A-Za-z_]\w*"


def parse_type(text: str, where: str) -> CType:
    """`const char* const*`, `uint64_t`, `struct DLManagedTensor**` and the like."""
    tokens = re.findall(r"\*|" + _IDENT, text)
    const = False
    base: Optional[str] = None
    pointers: list[bool] = []
    for token in tokens:
        if token == "const":
            if pointers:
                pointers[-1] = True
            elif base is None:
                const = True
            else:
                const = True  # "char const*"
        elif token == "*":
            if base is None:
                raise HeaderError(f"{where}: a '*' before the type in '{text}'")
            pointers.append(False)
        elif token in ("struct", "enum"):
            continue
        elif token == "unsigned" and base is None:
            base = "unsigned"
        elif base is None:
            base = token
        elif base == "unsigned" and token == "int":
            continue
        else:
            raise HeaderError(f"{where}: cannot read the type '{text}'")
    if base is None:
        raise HeaderError(f"{where}: no type in '{text}'")
    return CType(base, const, tuple(pointers))


def _declarator(text: str, where: str) -> Field:
    """`const char* name` -> Field(name, type)."""
    text = text.strip()
    match = re.fullmatch(r"(.*?)(" + _IDENT + r")", text, re.S)
    if not match or not match.group(1).strip():
        raise HeaderError(f"{where}: cannot read the declaration '{text}'")
    return Field(match.group(2), parse_type(match.group(1), where))


def _fields(text: str, where: str, abi: Abi) -> list[Field]:
    """One field declaration, maybe of several names: `nubo_transpose trans_a, trans_b`, or
    one array of numbers whose length is a constant declared before: `uint64_t n[NUBO_X]`."""
    array = re.fullmatch(r"(.*?)\[\s*(" + _IDENT + r")\s*\]", text.strip(), re.S)
    if array:
        head = _declarator(array.group(1), where)
        length = next((c for c in abi.constants if c.name == array.group(2)), None)
        if length is None or head.type.pointers or "," in text:
            raise HeaderError(f"{where}: an array's length must be a #define'd NUBO_ constant, "
                              f"and its elements numbers: '{text.strip()}'")
        t = head.type
        return [Field(head.name, CType(t.base, t.const, (), (length.name, length.value)))]
    first, *more = text.split(",")
    head = _declarator(first, where)
    fields = [head]
    for name in more:
        stars = name.count("*")
        name = name.replace("*", "").strip()
        if not re.fullmatch(_IDENT, name):
            raise HeaderError(f"{where}: cannot read the declaration '{text}'")
        base = head.type
        fields.append(Field(name, CType(base.base, base.const, (False,) * stars)))
    return fields


def _parameters(text: str, where: str) -> list[Field]:
    text = text.strip()
    if text in ("", "void"):
        return []
    return [_declarator(p, where) for p in text.split(",")]


_CPP_MARK = re.compile(r"\(C\+\+: (nubo(?:::" + _IDENT + r")+)\)")
# A field's C++ expression ends its comment, balanced parentheses and all.
_FIELD_CPP = re.compile(r"\s*\(C\+\+: (.+)\)$")


def field_cpp(docs: dict[str, str]) -> dict[str, str]:
    """Takes each field's "(C++: expr)" out of its doc: {field: expr}."""
    out = {}
    for name, doc in docs.items():
        m = _FIELD_CPP.search(doc)
        if m:
            out[name] = m.group(1)
            docs[name] = doc[:m.start()].strip()
    return out


def _comment_text(comment: str) -> str:
    """The words of a /* ... */ comment: its markers and leading stars gone, lines joined."""
    body = comment[2:-2]
    lines = [re.sub(r"^\s*\*\s?", "", line).strip() for line in body.splitlines()]
    return " ".join(line for line in lines if line)


def struct_notes(raw: str) -> dict[str, tuple[Optional[str], str, dict[str, str]]]:
    """For each struct and enum of a header, before its comments are dropped: the C++ type named
    by "(C++: nubo::...)" in the comment just above it, that comment (without the marker and
    without what it says of struct_size, which only C callers set), and the comment of each
    field or enumerator (on its line, after it, or on the lines just above it)."""
    out = {}
    pattern = re.compile(r"(/\*(?:(?!\*/).)*\*/\s*)?typedef\s+(struct|enum)\s+(" + _IDENT +
                         r")\s*\{(.*?)\}\s*(" + _IDENT + r")\s*;", re.S)
    for m in pattern.finditer(raw):
        comment = _comment_text(m.group(1).strip()) if m.group(1) else ""
        mark = _CPP_MARK.search(comment)
        doc = re.sub(r"\s*" + _CPP_MARK.pattern, "", comment)
        doc = " ".join(s for s in re.split(r"(?<=\.)\s+", doc) if "struct_size" not in s).strip()
        separator = ";" if m.group(2) == "struct" else ","
        docs: dict[str, str] = {}
        pending: list[str] = []
        last: list[str] = []
        start = 0
        body = m.group(4) + (separator if m.group(2) == "enum" else "")
        for t in re.finditer(r"/\*.*?\*/|" + separator, body, re.S):
            if t.group(0) != separator:
                if last and "\n" not in body[start:t.start()]:
                    for name in last:
                        docs[name] = _comment_text(t.group(0))
                else:
                    pending.append(_comment_text(t.group(0)))
                continue
            declaration = _COMMENT.sub(" ", body[start:t.start()])
            declaration = re.sub(r"\[[^\]]*\]|=.*", "", declaration, flags=re.S)
            if m.group(2) == "enum":
                last = re.findall(_IDENT, declaration)[:1]
            else:
                last = [re.findall(_IDENT, part)[-1] for part in declaration.split(",")
                        if re.findall(_IDENT, part)]
            if pending and last:
                for name in last:
                    docs[name] = " ".join(pending)
                pending = []
            start = t.end()
        out[m.group(5)] = (mark.group(1) if mark else None, doc, docs)
    return out


class Reader:
    def __init__(self, directory: Path, include_dir: Path) -> None:
        self.directory = directory
        self.include_dir = include_dir
        self.abi = Abi()
        self.notes: dict[str, tuple[Optional[str], str, dict[str, str]]] = {}
        self._seen: set[str] = set()

    def read(self, name: str) -> Abi:
        self._read_file(name)
        return self.abi

    def _read_file(self, name: str) -> None:
        if name in self._seen:
            return  # include guard
        self._seen.add(name)
        if name.startswith("nubo/"):
            self._read_version(self.include_dir / name)
            return
        path = self.directory / name
        raw = path.read_text()
        self.notes.update(struct_notes(raw))
        text = _COMMENT.sub(" ", raw)
        text = _CPLUSPLUS_OPEN.sub(" ", text)
        text = _CPLUSPLUS_CLOSE.sub(" ", text)
        # Walk the text in order: an #include is read where it stands.
        position = 0
        for match in _INCLUDE.finditer(text):
            self._read_declarations(text[position:match.start()], name)
            self._read_file(match.group(1))
            position = match.end()
        self._read_declarations(text[position:], name)

    def _read_version(self, path: Path) -> None:
        match = re.search(r"#define NUBO_ABI_VERSION (\d+)", path.read_text())
        if not match:
            raise HeaderError(f"{path}: no NUBO_ABI_VERSION")
        self.abi.abi_version = int(match.group(1))

    def _read_declarations(self, text: str, header: str) -> None:
        # Preprocessor lines carry no declarations (guards, NUBO_C_API's definition) except a
        # number the ABI fixes: `#define NUBO_X 8`.
        for line in text.splitlines():
            m = re.fullmatch(r"\s*#\s*define\s+(NUBO_[A-Z0-9_]+)\s+(\d+)\s*", line)
            if m:
                self.abi.order.append(Constant(m.group(1), int(m.group(2)), header))
        text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
        text = text.replace("NUBO_C_API", " ")
        depth, start = 0, 0
        for i, c in enumerate(text):
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth < 0:
                    raise HeaderError(f"{header}: an unmatched '}}'")
            elif c == ";" and depth == 0:
                statement = " ".join(text[start:i].split())
                start = i + 1
                if statement:
                    self._read_statement(statement, header)
        if text[start:].strip():
            raise HeaderError(f"{header}: text after the last declaration: {text[start:][:80]}")

    def _read_statement(self, s: str, header: str) -> None:
        where = f"{header}: '{s[:60]}'"
        abi = self.abi
        m = re.fullmatch(r"typedef enum (" + _IDENT + r") \{(.*)\} (" + _IDENT + ")", s)
        if m:
            constants = []
            for item in m.group(2).split(","):
                item = item.strip()
                if not item:
                    continue
                cm = re.fullmatch(r"(" + _IDENT + r") = (-?(?:0x[0-9a-fA-F]+|\d+))", item)
                if not cm:
                    raise HeaderError(f"{where}: every enumerator needs an explicit value")
                if cm.group(1).endswith("_MAX_ENUM"):
                    continue  # not a value: it only widens the enum
                constants.append((cm.group(1), int(cm.group(2), 0)))
            cpp, doc, docs = self.notes.get(m.group(3), (None, "", {}))
            docs = dict(docs)
            abi.order.append(Enum(m.group(3), constants, header, cpp, doc, docs,
                                  field_cpp(docs)))
            return
        m = re.fullmatch(r"typedef struct (" + _IDENT + r") \{(.*)\} (" + _IDENT + ")", s)
        if m:
            fields = [x for f in m.group(2).split(";") if f.strip()
                      for x in _fields(f, where, abi)]
            cpp, doc, docs = self.notes.get(m.group(3), (None, "", {}))
            docs = dict(docs)
            abi.order.append(Struct(m.group(3), fields, header, cpp, doc, docs,
                                    field_cpp(docs)))
            return
        m = re.fullmatch(r"typedef struct (" + _IDENT + r") (" + _IDENT + ")", s)
        if m:
            abi.order.append(Opaque(m.group(2)))
            return
        m = re.fullmatch(r"struct (" + _IDENT + ")", s)
        if m:
            # `struct nubo_x;` declares ahead a handle another header typedefs (a header that
            # nubo.h includes before the one defining it); any other is another library's.
            if not m.group(1).startswith("nubo_"):
                abi.order.append(External(m.group(1)))
            return
        m = re.fullmatch(r"typedef (.*?)\(\*(" + _IDENT + r")\)\((.*)\)", s)
        if m:
            abi.order.append(Callback(m.group(2), parse_type(m.group(1), where),
                                      _parameters(m.group(3), where), header))
            return
        m = re.fullmatch(r"(.*?)(" + _IDENT + r")\((.*)\)", s)
        if m and m.group(2).startswith("nubo_"):
            function = Function(m.group(2), parse_type(m.group(1), where),
                                _parameters(m.group(3), where), header)
            abi.functions.append(function)
            return
        raise HeaderError(f"{where}: not a declaration the bindings know how to mirror")


def read_abi(capi_dir: Path, include_dir: Path) -> Abi:
    """The ABI that capi/nubo.h declares (with the headers it includes)."""
    return Reader(capi_dir, include_dir).read("nubo.h")
