"""Function-call tests for Rust answers (agent-written inputs, a chat request's examples): the JSON arguments
become Rust literals of the parameter types the function declares, the call runs as one more test of the
test build, and its result is printed with ``{:?}``. Debug text of numbers, booleans, strings and vectors is
JSON, so it compares by Python's functional rule; other results (``Some(3)``, tuples) are compared as text.
Only the types below are supported; anything else is a ``runtime_error`` saying which."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

INTS = {"i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize"}


class Unsupported(ValueError):
    """An argument type (or value) this module cannot write as a Rust literal."""


class Paths(BaseModel, frozen=True):
    """How a literal names the standard library's items it writes (:func:`literal`)."""

    string_from: str = "String::from"
    vec: str = "vec!"
    some: str = "Some"
    none: str = "None"


PRELUDE = Paths()
"""The prelude's short names, as the grader's test module (:func:`call_test`) writes them."""


def split_commas(text: str) -> list[str]:
    """``text`` split at commas outside <>, (), []."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parameter_types(program: str, name: str) -> list[str] | None:
    """The declared types of ``name``'s parameters (its last definition in ``program``), or None."""
    found = list(re.finditer(rf"\bfn\s+{re.escape(name)}\s*(?:<[^>]*>)?\s*\(", program))
    if not found:
        return None
    start, depth = found[-1].end(), 1
    for end in range(start, len(program)):
        depth += {"(": 1, ")": -1}.get(program[end], 0)
        if depth == 0:
            break
    else:
        return None
    types = []
    for param in split_commas(program[start:end]):
        if ":" not in param:
            return None
        types.append(param.split(":", 1)[1].strip())
    return types


def _string(value: str) -> str:
    out = []
    for ch in value:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch.isprintable() and ch.isascii():
            out.append(ch)
        else:
            out.append(f"\\u{{{ord(ch):x}}}")
    return '"' + "".join(out) + '"'


def literal(value: Any, rust_type: str, paths: Paths = PRELUDE) -> str:
    """``value`` (from JSON) as a Rust expression of ``rust_type``, naming the standard items it writes as
    ``paths`` says; Unsupported otherwise."""
    t = rust_type.strip()
    if t.startswith("&") and not t.startswith("&str"):
        inner = re.sub(r"^&\s*(?:'\w+\s+)?(?:mut\s+)?", "", t)
        if inner.startswith("[") and inner.endswith("]"):
            inner = f"Vec<{inner[1:-1]}>"
        mutable = re.match(r"&\s*(?:'\w+\s+)?mut\s", t) is not None
        return ("&mut " if mutable else "&") + literal(value, inner, paths)
    if t in INTS and isinstance(value, int) and not isinstance(value, bool):
        return f"({value}{t})" if value >= 0 or t.startswith("i") else _bad(t, value)
    if t in ("f32", "f64") and isinstance(value, int | float) and not isinstance(value, bool):
        return f"({float(value)!r}{t})"
    if t == "bool" and isinstance(value, bool):
        return "true" if value else "false"
    if t in ("&str", "&'static str") and isinstance(value, str):
        return _string(value)
    if t == "String" and isinstance(value, str):
        return f"{paths.string_from}({_string(value)})"
    if t == "char" and isinstance(value, str) and len(value) == 1:
        return f"'\\u{{{ord(value):x}}}'"
    m = re.fullmatch(r"Vec\s*<(.+)>", t)
    if m and isinstance(value, list):
        return f"{paths.vec}[" + ", ".join(literal(v, m.group(1), paths) for v in value) + "]"
    m = re.fullmatch(r"Option\s*<(.+)>", t)
    if m:
        return paths.none if value is None else f"{paths.some}({literal(value, m.group(1), paths)})"
    if t.startswith("(") and t.endswith(")") and isinstance(value, list):
        types = split_commas(t[1:-1])
        if len(types) == len(value):
            return (
                "(" + "".join(f"{literal(v, ty, paths)}, " for v, ty in zip(value, types, strict=True)) + ")"
            )
    return _bad(t, value)


def _bad(rust_type: str, value: Any) -> str:
    raise Unsupported(f"cannot pass {json.dumps(value)[:40]} as {rust_type}")


def call_test(name: str, types: list[str], args: list[Any], marker: str) -> str:
    """A test module calling ``name`` with ``args`` and printing the result's Debug text after ``marker``."""
    if len(types) != len(args):
        raise Unsupported(f"{name} takes {len(types)} arguments, the test gives {len(args)}")
    call = ", ".join(literal(a, t) for a, t in zip(args, types, strict=True))
    return (
        "\n#[cfg(test)]\nmod memdoor_call {\n    use super::*;\n    #[test]\n    fn call() {\n"
        f"        let result = {name}({call});\n"
        f'        println!("\\n{marker}{{:?}}", result);\n    }}\n}}\n'
    )
