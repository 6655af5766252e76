"""The harness program's source, kept in parts with one job each, and :func:`program_text`, which joins them.

The harness is the trusted Python program that runs inside the sandbox: it loads one candidate once, runs
its tests in order and streams each raw result to the supervisor (its frames are described in the
docstring of ``head.py``, the program's own docstring; its semantics in docs/sandbox.md). The sandbox
interpreter gets it as ONE program text (``python3 -I -S -c TEXT``, or that text precompiled, see
``memdoor.sandbox.program``), using the standard library only; Memdoor never imports it.

The parts are fragments of that one program, not modules: a part uses the names of the others freely and
cannot be imported alone. :func:`program_text` takes each part's text after its :data:`PART_START` line
(blank lines around it dropped) and joins the parts in the order of :data:`PARTS`, two blank lines apart:

1. ``head``: the program's docstring, the standard modules, the LiveCodeBench prelude, the functions
   captured before any candidate code runs;
2. ``wire``: result frames, output captured within a cap, exceptions in a line, exact value encoding;
3. ``lcb``: LiveCodeBench's transformation and guard of stdin programs;
4. ``runners``: the functional, LiveCodeBench stdin and plain stdin runners;
5. ``check_link``: a check job's swallowed streams, stand-ins, value decoding and private pipes;
6. ``check_program``: the program's side of a check job (forked process: loads it, answers calls);
7. ``check_judge``: the judge's side of a check job (``check`` run outside the program);
8. ``main``: start-up, limits, reading the job, the check process's fork, the loop over tests.

The order is the program's: a later part's classes derive from an earlier part's (``Runner``,
``Channel``), and ``main`` ends the text.
"""

from __future__ import annotations

from importlib import resources

PARTS = ("head", "wire", "lcb", "runners", "check_link", "check_program", "check_judge", "main")
"""The parts (``<name>.py`` in this package) in the order the program text joins them."""

PART_START = "# ---- the harness program's text, from the next line on ----"
"""The line of each part after which its program text starts (what is above it only describes the part)."""


class HarnessPartError(ValueError):
    """A harness part without exactly one :data:`PART_START` line."""


def part_text(name: str, source: str) -> str:
    """The program text of the part ``name`` whose file holds ``source``: after its start line, blank lines
    around it dropped."""
    lines = source.split("\n")
    if lines.count(PART_START) != 1:
        raise HarnessPartError(f"harness part {name!r} must have exactly one line {PART_START!r}")
    return "\n".join(lines[lines.index(PART_START) + 1 :]).strip("\n")


def program_text() -> str:
    """The harness program: the parts of :data:`PARTS`, in that order, two blank lines apart."""
    folder = resources.files(__name__)
    texts = [part_text(name, folder.joinpath(f"{name}.py").read_text(encoding="utf-8")) for name in PARTS]
    return "\n\n\n".join(texts) + "\n"
