"""Both versions of a Rust file in each version's harness, so that a version that does not compile is said
once, as that, and never read as a difference of behaviour.

The harness of one version holds that version's file at the crate root (its ``fn main`` renamed) and the
other version inside ``mod __memdoor_other { ... }``, where it is only compiled: when either file does not
compile, neither harness does, and every call is "cannot be called" on both sides (a note, not a finding).
The two harnesses place each version on the same lines — line 1 the root file's inner attributes
(``#![...]``, moved up), then the base, then the changed file — so a compile error's line says which file
it is in, whichever side reported it (:func:`compile_failure`).

Inside the module the other file reads as on its own: ``crate::`` paths point into the module, and its
``#[macro_export]`` is blanked, so the two copies never collide.

Both versions come from a pull request, which may try to run before the harness takes the nonce out of its
input (:mod:`.seal`), or to stand in for what the harness calls. So in both copies the attributes that
place an item where the linker or the runtime finds it (``#[used]``, ``#[link_section]``, ``#[no_mangle]``,
``#[export_name]``, also as ``#[unsafe(...)]``: a function in ``.init_array`` runs before ``main``, one
named ``write`` replaces libc's) are blanked; a file that still names one of them (``#[cfg_attr(...,
link_section = ...)]``, a macro's argument), or that holds ``global_asm!``, ``#[global_allocator]``,
``#![no_main]``, ``include!``, or an ``extern crate`` that could take the name ``std`` (``extern crate self
as std;`` would make the harness's ``::std::println!`` its own) is not compiled with the harness at all
(:func:`refusal`, by :func:`memdoor.sandbox.lang.rust_untrusted.refused`, which the grader applies too); nor
is a file two of whose rewrites here overlap (:class:`OverlappingEdits`: an inner attribute never closed, a
``crate::`` inside ``#[macro_export(...)]``) or that has an inner attribute over several lines with a quote in
it (:class:`QuotedAttribute`), in either harness. No crate the sandbox provides brings a
``#[ctor]``-like attribute.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel

from memdoor.sandbox.lang.rust_untrusted import LINKAGE, refused
from memdoor.sandbox.lang.rustscan import RUST_MAIN, blank, closing, masked, shebang_end, spans

OTHER = "__memdoor_other"
Side = Literal["old", "new"]
_CRATE_PATH = re.compile(r"(?<![\w$])crate\s*::")
_MACRO_EXPORT = re.compile(r"#\s*\[\s*macro_export\b[^\]\n]{0,80}\]")
REFUSED = "not compiled with the harness: "
"""How :func:`compile_failure` begins for a file :func:`refusal` refused (and its note for the file)."""
_INNER_ATTRIBUTE = re.compile(r"\s*(#\s*!\s*)\[")
_SPACE = re.compile(r"\s*")
_LAYOUT = re.compile(r"[\t\n\x0b\x0c\r ]+")
"""A run of ASCII whitespace (rustc's too)."""
_ERROR_LINE = re.compile(r"-->\s*[^\s:]*main\.rs:(\d+):")
HARNESS_FAILED = "the harness does not compile"
"""How :func:`compile_failure` begins when the error is in the harness's own code (the calls it makes)."""


class Layout(BaseModel):
    """Where the versions sit in either harness of a pair: the harness line of each one's first line."""

    base_first: int
    base_lines: int
    changed_first: int
    changed_lines: int


class Unplaced(ValueError):
    """A file no harness places (:func:`refusal` says why)."""


class OverlappingEdits(Unplaced):
    """Two parts of a file the harness rewrites overlap (an inner attribute never closed around ``fn main``,
    a linkage attribute inside another): no harness places the file (:func:`refusal` says so)."""


class QuotedAttribute(Unplaced):
    """An inner attribute over several lines with a quote in its code (a literal, a lifetime): on line 1 of
    the harness, a space for a line break could change where a literal ends (``'<LF>'`` is one character
    literal to rustc, a quote then another to :mod:`.rustscan`), so the file is not placed (:func:`_line`)."""


def _edit(src: str, edits: list[tuple[int, int, str]]) -> str:
    """``src`` with each ``[start, end)`` replaced; OverlappingEdits when two of them overlap."""
    out, at = [], 0
    for start, end, text in sorted(edits):
        if start < at:
            line = src.count("\n", 0, start) + 1
            raise OverlappingEdits(f"parts the harness rewrites that overlap (its line {line})")
        out += [src[at:start], text]
        at = end
    return "".join([*out, src[at:]])


def _linkage(text: str, after: int = 0) -> list[tuple[int, int, str]]:
    """The edits that blank the linkage attributes (:data:`.rust_untrusted.LINKAGE`) of masked ``text`` from
    ``after``."""
    return [(m.start(), m.end(), blank(m.group())) for m in LINKAGE.finditer(text, after)]


@lru_cache(maxsize=8)
def refusal(old: str, new: str) -> str | None:
    """Why the pair cannot be compiled with the harness (module docstring), or placed in it (its edits of a
    file overlap: :class:`OverlappingEdits`); None when it can. Worked out once per pair (kept for the last
    few): the stage asks when it finds a file's changed functions, then each harness of the pair asks."""
    files = (("the changed file", new), ("the base", old))
    for which, src in files:
        if (why := refused(src, linkage_blanked=True)) is not None:
            return f"{which} holds {why}"
    for which, src in files:
        try:
            _root(src)
            _module(src)
        except Unplaced as e:
            return f"{which} holds {e}"
    return None


def refused_harness(why: str) -> str:
    """A harness that does not compile and says why, never compiling either file (:func:`refusal`)."""
    return f"::std::compile_error!({json.dumps(REFUSED + why)});\nfn main() {{}}\n"


def _shebang(src: str) -> list[tuple[int, int, str]]:
    """The edit that blanks the file's shebang, if it has one: exactly what rustc skips as one
    (:func:`.rustscan.shebang_end`, as every reading of the file here), never a first line ``#!`` that
    rustc reads as an inner attribute (``#!/* ... */[allow(unused)]``, its comment over several lines:
    blanking its first line made the rest of the comment code)."""
    end = shebang_end(src)
    return [(0, end, blank(src[:end]))] if end else []


def _line(src: str, code: str, start: int, end: int) -> str:
    """The inner attribute ``src[start:end]`` on one line (line 1 of the harness): as written when it is on
    one line (Python's ``split()`` made a no-break space, part of a word to rustc and the scanner, a space:
    one between ``x`` and ``r"\\"`` made that a raw string, whose next quote opened a string that made code
    of the scanner's string on the next lines); else its ``code`` (:func:`.rustscan.masked` without its
    literals blanked, its comments dropped: a ``//`` one hid the rest of line 1) with each run of ASCII
    whitespace one space, when that code holds no quote; else :class:`QuotedAttribute`."""
    if "\n" not in src[start:end]:
        return src[start:end]
    if "'" in code[start:end] or '"' in code[start:end]:
        line = src.count("\n", 0, start) + 1
        raise QuotedAttribute(f"an inner attribute over several lines with a quote in it (its line {line})")
    return _LAYOUT.sub(" ", code[start:end])


def _root(src: str) -> tuple[str, str]:
    """The file's inner attributes (on one line) and the file without them, its shebang and the inner doc
    comments before its first item blanked (lines kept), its ``fn main`` renamed ``__memdoor_main``."""
    text, code = masked(src), masked(src, literals=False)
    edits = _shebang(src)
    i = edits[0][1] if edits else 0  # after the shebang, if any
    edits += _linkage(text, i)
    attributes: list[str] = []
    while (m := _INNER_ATTRIBUTE.match(text, i)) is not None:
        start, end = m.start(1), closing(text, m.end() - 1) + 1
        attributes.append(_line(src, code, start, end))
        edits.append((start, end, blank(src[start:end])))
        i = end
    i = _SPACE.match(text, i).end()  # type: ignore[union-attr]  # matches the empty text too
    for s in spans(src):
        if s.start >= i:
            break
        if src.startswith(("//!", "/*!"), s.start):
            edits.append((s.start + 2, s.start + 3, " "))
    if (m := RUST_MAIN.search(text)) is not None:
        edits.append((m.start(), m.end(), "fn __memdoor_main("))
    return " ".join(attributes), _edit(src, edits)


def _module(src: str) -> str:
    """The file as the body of ``mod __memdoor_other`` (its first line shares the module's line)."""
    text = masked(src)
    edits = _shebang(src)
    edits += _linkage(text, edits[0][1] if edits else 0)
    edits += [(m.start(), m.end(), blank(m.group())) for m in _MACRO_EXPORT.finditer(text)]
    edits += [(m.start(), m.end(), f"crate::{OTHER}::") for m in _CRATE_PATH.finditer(text)]
    return f"mod {OTHER} {{ " + _edit(src, edits) + "\n}"


def layout(old: str, new: str) -> Layout:
    return Layout(base_first=2, base_lines=old.count("\n") + 1, changed_first=old.count("\n") + 4,
                  changed_lines=new.count("\n") + 1)  # fmt: skip


def pair(old: str, new: str, side: Side) -> str:
    """The text of ``side``'s harness before our own items: its file at the root, the other in a module."""
    own = old if side == "old" else new
    attributes, root = _root(own)
    base = root + "\n" if side == "old" else _module(old)
    changed = root + "\n" if side == "new" else _module(new)
    return f"{attributes}\n{base}\n{changed}\n"


def compile_failure(detail: str, where: Layout) -> str:
    """What did not compile, from the compiler's first error: the base, the changed file (and its line), a
    moved inner attribute, or the harness's own code."""
    if (refused := detail.find(REFUSED)) >= 0:
        return detail[refused:].split("\n", 1)[0].rstrip('"')
    m = _ERROR_LINE.search(detail)
    line = int(m.group(1)) if m is not None else 0
    if where.base_first <= line < where.base_first + where.base_lines:
        what = f"the base does not compile in the harness (its line {line - where.base_first + 1})"
    elif where.changed_first <= line < where.changed_first + where.changed_lines:
        what = f"the changed file does not compile in the harness (its line {line - where.changed_first + 1})"
    elif line == 1:
        what = "an inner attribute (#![...]) of the file does not compile in the harness"
    else:
        what = HARNESS_FAILED
    return f"{what}: {detail}"
