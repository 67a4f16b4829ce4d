"""The headers' comments as the bindings' docs, the same way in every generated file: a comment
becomes a sentence, wrapped for Python docstrings and Rust `///` lines, and an int field whose
comment says what nonzero means is a flag (bool in Python and Rust), its doc saying true and
false instead of nonzero and 0.
"""

from __future__ import annotations

import re
import textwrap

from c_header import Field, Struct


def sentence(text: str) -> str:
    text = text.strip()
    return (text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


def is_flag(s: Struct, f: Field) -> bool:
    return f.type.base == "int" and "nonzero" in s.field_docs.get(f.name, "").lower()


def field_doc(s: Struct, f: Field) -> str:
    """The field's comment as a sentence, a flag's in true and false."""
    doc = s.field_docs.get(f.name, "")
    if is_flag(s, f):
        doc = re.sub(r"\bnonzero\b", "true", doc, flags=re.I)
        doc = re.sub(r"\b0(?= \(default\))", "false", doc)
    return sentence(doc)


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(sentence(text), width, break_on_hyphens=False, break_long_words=False)


def python_doc(text: str) -> list[str]:
    """An attribute's docstring, indented in a class body, within 100 columns."""
    lines = _wrap(text, 88)
    if len(lines) <= 1:
        return [f'    """{line}"""' for line in lines]
    return [f'    """{lines[0]}'] + [f"    {line}" for line in lines[1:]] + ['    """']


def rust_doc(text: str, indent: str = "    ") -> list[str]:
    """`///` lines at `indent`, within 100 columns."""
    return [f"{indent}/// {line}" for line in _wrap(text, 96 - len(indent))]
