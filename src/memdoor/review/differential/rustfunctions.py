"""Which Rust functions a change altered.

The file is read with its comments, strings and character literals blanked (``sandbox.lang.rustscan``), so
braces in them never count; a top-level ``fn``, or one directly in a top-level ``impl Type { ... }`` block, is
compared by its text without comments and layout. As for Python, a function whose text is the same but
that reads a top-level ``const``/``static`` whose definition changed counts too. Only functions the harness
can call are compared: not generic, not ``async`` or ``unsafe``, not built only under ``#[cfg]`` or
``#[test]``, and of parameters all of simple types (:func:`.rust_inputs.simple`); the others are skipped
with the reason. An item may follow attributes on its own line (``#[inline] pub extern "C" fn f``,
``#[allow(dead_code)] impl Foo {``). A file the harness refuses to compile (:func:`.rust_pair.refusal`:
what could run outside the calls) has its changed functions skipped with that note.

Each bracket's partner is found once (``rustscan.partners``) and text inside a ``{`` never closed is no
top-level text: a hostile file costs its length to scan, never its length times its number of functions.

In an inherent impl of a type named by a plain name (not ``impl<T> ...``, not ``impl Trait for Type``), an
associated function is called as ``Type::f(args)``; a method (``&self``, ``&mut self``, ``self``) on a value
``Type::default()`` makes, so only when both versions of the file derive or implement ``Default`` for the
type. A ``&mut self`` method's target is named ``(&mut Type::default()).f`` (:data:`MUT_METHOD`): the
harness shows the value after the call too.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field

from memdoor.review.context import Skipped
from memdoor.review.differential.programs import line_literals
from memdoor.review.differential.rust_inputs import simple
from memdoor.review.differential.rust_pair import refusal
from memdoor.review.differential.targets import Changed, changed_lines
from memdoor.sandbox.lang.rust_call import split_commas
from memdoor.sandbox.lang.rustscan import masked, partners, words

_LINE_START = r"^[ \t]*(?:#\s*\[[^\]\n]{0,200}\][ \t]*)*"  # at a line's start, after attributes on that line
_VISIBLE = _LINE_START + r"(?:pub(?:\([^)\n]{0,64}\))?\s+)?"  # bounded: no quadratic search
_ABI = r'(?:extern(?:\s*"[^"\n]{0,40}")?\s+)?'  # ``extern "C"`` read in masked text: its quotes, "C" blanked
_HEAD = re.compile(
    _VISIBLE + r"(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?" + _ABI + r"fn\s+(\w+)\s*([<(])", re.M
)
_VALUE = re.compile(_VISIBLE + r"(?:const|static)\s+(?:mut\s+)?(\w+)\s*:", re.M)
_IMPL = re.compile(_LINE_START + r"(?:unsafe\s+)?impl\b", re.M)
_CONDITION = re.compile(r"#\[\s*(?:cfg\s*\(|test\s*\])")
_TRAIT_FOR = re.compile(r"\bfor\b(?!\s*<)")  # not a ``for<'a>`` bound
_FN = re.compile(r"\bfn\b")
_WHERE = re.compile(r"\bwhere\b")
_DEFAULT_TRAIT = re.compile(r"(?:(?:::)?(?:std|core)::default::)?Default")
_DERIVE = re.compile(r"#\s*\[\s*derive\s*\(([^()\[\]]{0,400})\)\s*\]")
_MORE_ATTRIBUTES = re.compile(r"\s*(?:#\s*\[[^\]]{0,400}\]\s*){0,16}")  # bounded: each derive reads a few
_TYPE_AFTER = re.compile(r"(?:pub(?:\([^)\n]{0,64}\))?\s+)?(?:struct|enum|union)\s+(\w+)")
_RECEIVER = re.compile(r"(&\s*(?:'\w+\s+)?)?(mut\s+)?self")
_SELF_TYPE = re.compile(r"(&\s*(?:'\w+\s+)?)?(mut\s+)?Self")
_BODY_OR_END = re.compile(r"[{;]")
_BRACKET_OR_END = re.compile(r"[()\[\]{};]")
_WORD = re.compile(r"\b\w+\b")
_NEWLINE = re.compile(r"\n")
MAX_NAMES = 400
"""Characters of the list of functions a refused file's note names."""
MAX_ATTRIBUTE_LINES = 16
MAX_IMPL_NAME = 80
"""Characters of an impl's type (or trait) kept in its functions' names."""
MUT_METHOD = re.compile(r"\(&mut (\w+)::default\(\)\)\.(\w+)")
"""A ``&mut self`` method's target name, ``(&mut Type::default()).f``: the type and the method."""


def _top(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of ``text[start:end]`` at brace depth 0 (in it): the text after a ``{``
    that is never closed is in none."""
    end = len(text) if end is None else end
    spans, depth = [], 0
    for k in range(start, end):
        c = text[k]
        if c == "{":
            if depth == 0:
                spans.append((start, k))
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = k + 1
    if depth == 0:
        spans.append((start, end))
    return spans


@dataclass(frozen=True)
class _Text:
    """A file read once: its text, the text :func:`.rustscan.masked`, and each bracket's partner in it."""

    src: str
    text: str
    pairs: dict[int, int]

    @classmethod
    def of(cls, src: str) -> _Text:
        text = masked(src)
        return cls(src, text, partners(text))


@dataclass(frozen=True)
class Fn:
    """A function the scan found: its ``[start, end)`` in the file, its parameters (a method's without its
    receiver), why it cannot be called (None: it can), and for one in an impl its type and its receiver
    (``&self``, ``&mut self``, ``self``; None for an associated function)."""

    start: int
    end: int
    params: list[tuple[str, str]]
    blocked: str | None
    owner: str | None = None
    receiver: str | None = None


@dataclass
class Scan:
    """A file's functions by name (``f``, or ``Type::f``, ``<Type as Trait>::f`` in an impl), its top-level
    ``const``/``static`` items' texts by name, and the types it derives or implements ``Default`` for."""

    fns: dict[str, Fn] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)
    defaults: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Impl:
    """An impl block's header read: the prefix of its functions' names, its type when the harness can
    call it (a plain name), and why its functions cannot be called."""

    prefix: str
    owner: str | None
    blocked: str | None
    default_for: str | None = None


def _attributes(text: str, at: int) -> str:
    """The attribute lines right above the line starting at ``at`` in masked ``text`` (blank ones between)."""
    out: list[str] = []
    for _ in range(MAX_ATTRIBUTE_LINES):
        if at == 0:
            break
        start = text.rfind("\n", 0, at - 1) + 1
        line = text[start : at - 1].strip()
        if line and not line.startswith("#["):
            break
        out.append(line)
        at = start
    return " ".join(out)


def _conditional(text: str, m: re.Match[str]) -> bool:
    """Whether the item whose line ``m`` matched (from its start) is built only under ``#[cfg]`` or
    ``#[test]``: by the attributes on the lines above it or on its own line."""
    return _CONDITION.search(_attributes(text, m.start()) + " " + m.group()) is not None


def _uncallable(text: str, m: re.Match[str]) -> str | None:
    """Why the harness cannot call the function whose head ``m`` matched (None: it can)."""
    head = m.group()[m.group().rfind("]") + 1 :].split()  # after the attributes on its line
    if m.group(2) == "<":
        return "a generic function"
    if "async" in head or "unsafe" in head:
        return "an async or unsafe function"
    if _conditional(text, m):
        return "a function built only under a condition (#[cfg], #[test])"
    return None


def _receiver(params: list[tuple[str, str]]) -> tuple[str | None, str | None]:
    """The receiver of a function in an impl (``&self``, ``&mut self``, ``self``, None when it has none),
    and why the harness cannot call it on a value (None: it can)."""
    if not params:
        return None, None
    name, type_ = params[0]
    m = _RECEIVER.fullmatch(name)
    if m is None:
        return None, None
    if type_ and (m.group(1) is not None or (m := _SELF_TYPE.fullmatch(type_)) is None):
        return "self", f"a method whose receiver is self: {type_[:MAX_IMPL_NAME]}"
    kind = "self" if m.group(1) is None else "&mut self" if m.group(2) else "&self"
    return kind, None


def _impl(text: str, m: re.Match[str], brace: int) -> _Impl:
    """The impl whose header ``m`` matched, its body's ``{`` at ``brace``."""
    head = " ".join(text[m.end() : brace].split())
    generic = head.startswith("<")
    if generic:
        head = head[_close_angle(head, 0) + 1 :].strip()
    head = _WHERE.split(head, maxsplit=1)[0].strip()
    parts = _TRAIT_FOR.split(head, maxsplit=1)
    self_type = parts[-1].strip()[:MAX_IMPL_NAME]
    if len(parts) == 2:
        trait = parts[0].strip()[:MAX_IMPL_NAME]
        plain = not generic and re.fullmatch(r"\w+", self_type) and _DEFAULT_TRAIT.fullmatch(trait)
        blocked = "a function of a trait impl (impl Trait for Type)"
        return _Impl(f"<{self_type} as {trait}>::", None, blocked, self_type if plain else None)
    if generic:
        return _Impl(f"{self_type}::", None, "a function of a generic impl (impl<...>)")
    if re.fullmatch(r"\w+", self_type) is None:
        return _Impl(f"{self_type}::", None, "a function of an impl of a type that is no plain name")
    if _conditional(text, m):
        return _Impl(f"{self_type}::", None, "a function built only under a condition (#[cfg], #[test])")
    return _Impl(f"{self_type}::", self_type, None)


def _functions(file: _Text, spans: list[tuple[int, int]], impl: _Impl | None, out: Scan) -> None:
    """The functions whose heads are in ``spans`` of the masked text (``impl``: the block they are in)."""
    src, text = file.src, file.text
    read_to = 0  # a function's text holds no other item: each part of the text is read once
    for a, b in spans:
        for m in _HEAD.finditer(text, a, b):
            if m.start() < read_to:
                continue
            open_at = text.find("(", _close_angle(text, m.start(2))) if m.group(2) == "<" else m.end() - 1
            if open_at < 0:
                read_to = len(text)
                continue
            close = file.pairs[open_at]
            found = _BODY_OR_END.search(text, close)
            read_to = found.start() if found is not None else len(text)
            if found is None or found.group() == ";":
                continue  # a declaration without a body
            params = [(p.split(":", 1)[0].strip(), p.split(":", 1)[1].strip()) if ":" in p else (p.strip(), "")
                      for p in split_commas(src[open_at + 1 : close])]  # fmt: skip
            end = file.pairs[found.start()] + 1
            if impl is None:
                out.fns[m.group(1)] = Fn(m.start(), end, params, _uncallable(text, m))
                continue
            receiver, odd = _receiver(params)
            blocked = impl.blocked or _uncallable(text, m) or odd
            params = params[1:] if receiver is not None else params
            out.fns[impl.prefix + m.group(1)] = Fn(m.start(), end, params, blocked, impl.owner, receiver)


def _impls(file: _Text, spans: list[tuple[int, int]], out: Scan) -> None:
    """The functions of the impl blocks whose headers are in the top-level ``spans``, and the ``impl
    Default for Type`` among them."""
    text = file.text
    for a, b in spans:
        last = None
        for m in _IMPL.finditer(text, a, b):
            last = m
        if last is None or b >= len(text) or ";" in text[last.end() : b]:
            continue  # no impl here, or none whose body starts where the span ends
        if _FN.search(text, max(text.rfind(";", a, last.start()) + 1, a), last.start()):
            continue  # ``fn f() ->\n    impl Trait {``: a function's body
        impl = _impl(text, last, b)
        if impl.default_for is not None:
            out.defaults.add(impl.default_for)
        _functions(file, _top(text, b + 1, file.pairs[b]), impl, out)


def _derived_defaults(text: str, spans: list[tuple[int, int]], out: Scan) -> None:
    """The types whose ``#[derive(...)]`` (top-level, among their attributes) names ``Default``."""
    for a, b in spans:
        for m in _DERIVE.finditer(text, a, b):
            if not any(_DEFAULT_TRAIT.fullmatch(d.strip()) for d in m.group(1).split(",")):
                continue
            after = _MORE_ATTRIBUTES.match(text, m.end())
            kind = _TYPE_AFTER.match(text, after.end() if after is not None else m.end())
            if kind is not None:
                out.defaults.add(kind.group(1))


def items(src: str) -> Scan:
    """The top-level functions and those of top-level impl blocks, the top-level ``const``/``static``
    items and the types with ``Default``."""
    file = _Text.of(src)
    text = file.text
    out = Scan()
    top = _top(text)
    _functions(file, top, None, out)
    _impls(file, top, out)
    _derived_defaults(text, top, out)
    value_to = 0
    for a, b in top:
        for m in _VALUE.finditer(text, a, b):
            if m.start() < value_to:
                continue
            value_to = _item_end(text, m.end())
            out.values[m.group(1)] = " ".join(words(src[m.start() : value_to]))
    return out


def _item_end(text: str, i: int) -> int:
    """After the ``;`` that ends the item going on at ``i`` in masked ``text``: the first one outside brackets
    (``const X: [i32; 3] = [1, 2, 3];`` ends at its last ``;``); the end of the text when none does."""
    depth = 0
    for m in _BRACKET_OR_END.finditer(text, i):
        c = m.group()
        if c == ";" and depth == 0:
            return m.end()
        depth += 1 if c in "([{" else -1 if c in ")]}" else 0
    return len(text)


def _close_angle(text: str, i: int) -> int:
    depth = 0
    for j in range(i, len(text)):
        depth += {"<": 1, ">": -1}.get(text[j], 0)
        if depth == 0:
            return j
    return len(text) - 1


def _rows(src: str, start: int, end: int) -> str:
    """The lines of ``src`` that ``[start, end)`` is on (``start`` is a line's start, out of any comment or
    literal: the text is read for its comments as the whole file is)."""
    stop = src.find("\n", max(end - 1, start))
    return src[start : len(src) if stop < 0 else stop]


def _lines(src: str) -> Callable[[int], int]:
    """The line (from 1) of an index of ``src``, its line breaks found once (not counted again each time)."""
    breaks = [m.start() for m in _NEWLINE.finditer(src)]
    return lambda at: bisect_left(breaks, at) + 1


def _target(name: str, fn: Fn, defaults: set[str]) -> tuple[str, str | None]:
    """What the harness calls for the function ``name`` (``f``, ``Type::f``, ``Type::default().f`` or
    ``(&mut Type::default()).f``), and why it cannot (None: it can)."""
    if fn.blocked is not None:
        return name, fn.blocked
    if not all(simple(t) for _, t in fn.params) or any(_RECEIVER.fullmatch(n) for n, _ in fn.params):
        return name, "a function of parameters of other types"
    if fn.owner is None or fn.receiver is None:
        return name, None
    if fn.owner not in defaults:
        why = f"a method of {fn.owner}, which does not derive or implement Default in both versions"
        return name, why + " (the harness has no value to call it on)"
    method = name.rsplit("::", 1)[-1]
    if fn.receiver == "&mut self":
        return f"(&mut {fn.owner}::default()).{method}", None
    return f"{fn.owner}::default().{method}", None


def compare_rust(old: str, new: str, *, file: str) -> tuple[list[Changed], list[Skipped]]:
    """The functions of ``new`` whose code changed from ``old`` (or that read a changed ``const``/``static``),
    and the changed ones that cannot be called (generic, in a trait impl, a method of a type without
    ``Default``, or a parameter of another type)."""
    before, after = items(old), items(new)
    names = before.values.keys() | after.values.keys()
    moved = {k for k in names if before.values.get(k) != after.values.get(k)}
    defaults = before.defaults & after.defaults
    out: list[Changed] = []
    skipped: list[Skipped] = []
    new_line, old_line = _lines(new), _lines(old)
    for name, fn in after.fns.items():
        if name == "main" or name not in before.fns:
            continue
        start, end, was = fn.start, fn.end, before.fns[name]
        reads = sorted(set(_WORD.findall(masked(new[start:end]))) & moved)
        if words(old[was.start : was.end]) != words(new[start:end]):
            why = "its code changed"
        elif reads:
            why = f"it reads {', '.join(reads)}, whose top-level value changed"
        else:
            continue
        called, blocked = _target(name, fn, defaults)
        if blocked is not None:
            skipped.append(Skipped(file=file, reason=f"{name}: {blocked}: not compared"))
            continue
        old_src, new_src = old[was.start : was.end], new[start:end]
        first, o_first = new_line(start), old_line(was.start)
        o_lines, n_lines = changed_lines(old_src, new_src, first)
        # the literals of the changed lines, read in the two functions' lines (not the files: one pass
        # over a file per changed function would cost a file of many its length times their number)
        rows = [n - first + 1 for n in n_lines]
        old_rows, new_rows = _rows(old, was.start, was.end), _rows(new, start, end)
        literals = line_literals("rust", old_rows, new_rows, o_lines, rows)
        o_lines = [o_first + k - 1 for k in o_lines]
        out.append(Changed(
            target="function", language="rust", file=file, old_file=file, name=called, params=fn.params,
            old_source=old_src, new_source=new_src, line=first, end_line=new_line(end - 1),
            changed_lines=n_lines, literals=literals, why=why,
        ))  # fmt: skip
    why = refusal(old, new)
    if why is not None and out:
        names = ", ".join(c.name for c in out)[:MAX_NAMES]
        return [], [Skipped(file=file, reason=f"{why}: not compared ({names})"), *skipped]
    return out, skipped
