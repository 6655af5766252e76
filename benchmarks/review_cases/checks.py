"""What runs in the sandbox to decide a case, and the public test file a case's repository holds.

- ``public_check``: the docstring examples as a HumanEval-style ``check(candidate)``; ``test_file`` is the
  same examples as a unittest module (what the review's ``--test`` command runs), so a change passes one
  exactly when it passes the other.
- ``agreement_check``: the change agrees with a reference (exec'd inside the check, in the sandbox) on
  random inputs shaped like the known ones (``random_inputs``): values of the same types, within the
  known ranges and lengths, so that no input is slower than the problem's own tests.
- ``differs_check``: some random input shows a difference from a reference.
- ``property_check``: an intended change's new behaviour holds, and it does not on the reference.
"""

from __future__ import annotations

import ast
import copy
import random
from typing import Any

from review_cases.records import Example

HELPERS = """
import copy as _copy


def _as_lists(value):
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    return value


def _shape(value):
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_shape(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), _shape(v)) for k, v in value.items())))
    return type(value).__name__


def _run(f, args):  # (outcome kind, value or exception class, the arguments after the call)
    args = _copy.deepcopy(list(args))
    try:
        value = f(*args)
    except Exception as e:
        return ("raises", type(e).__name__, args)
    return ("value", value, args)


def _equal(x, y, plain):
    if plain:
        x, y = _as_lists(x), _as_lists(y)
    try:
        return (x == y or repr(x) == repr(y)) and _shape(x) == _shape(y)
    except Exception:
        return False


def _same(a, b, plain=False, args=True):  # same outcome and, with args, the same arguments after the call
    if a[0] != b[0] or (args and not _equal(a[2], b[2], plain)):
        return False
    return a[1] == b[1] if a[0] == "raises" else _equal(a[1], b[1], plain)


def _outcomes(f, g):  # (the reference g's outcome, f's outcome) on every input
    return [(_run(g, a), _run(f, a)) for a in _INPUTS]


def _reference(source, entry):
    space = {"__name__": "reference"}
    exec(compile(source, "reference.py", "exec"), space)
    return space[entry]
"""

AS_LISTS = '''def as_lists(value):
    """Tuples compare as lists (the examples are written as lists)."""
    if isinstance(value, (list, tuple)):
        return [as_lists(v) for v in value]
    return value
'''


def call_text(entry: str, args: list[Any]) -> str:
    return f"{entry}({', '.join(repr(a) for a in args)})"


def public_check(examples: list[Example]) -> str:
    """The examples as ``check(candidate)``: the same comparisons as :func:`test_file`."""
    body = []
    for e in examples:
        call = call_text("candidate", e.args)
        if e.raises:
            body += ["    try:", f"        {call}", f"    except {e.raises}:", "        pass", "    else:",
                     f"        raise AssertionError('no {e.raises}')"]  # fmt: skip
        else:
            body.append(f"    assert as_lists({call}) == {e.expected!r}")
    return AS_LISTS + "\n\ndef check(candidate):\n" + "\n".join(body or ["    pass"]) + "\n"


def test_file(entry: str, examples: list[Example]) -> str:
    """``test_public.py``: the examples as unittest tests (run by ``python3 -m unittest test_public``)."""
    out = [
        f'"""The examples of `{entry}`\'s docstring, as tests."""',
        "",
        "import unittest",
        "",
        f"from solution import {entry}",
        "",
        "",
        AS_LISTS,
        "",
        "class TestExamples(unittest.TestCase):",
    ]
    for n, e in enumerate(examples, 1):
        call = call_text(entry, e.args)
        out.append(f"    def test_example_{n}(self):")
        if e.raises:
            out += [f"        with self.assertRaises({e.raises}):", f"            {call}"]
        else:
            out.append(f"        self.assertEqual(as_lists({call}), {e.expected!r})")
        out.append("")
    out += ["", 'if __name__ == "__main__":', "    unittest.main()", ""]
    return "\n".join(out)


def _literal(value: Any) -> bool:
    try:
        return ast.literal_eval(repr(value)) == value or repr(value) == repr(ast.literal_eval(repr(value)))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _like(samples: list[Any], rng: random.Random, depth: int = 0) -> Any:
    """A value like ``samples``: one of their types, within their range (numbers) and length (sequences)."""
    names = sorted({type(s).__name__ for s in samples})
    name = rng.choice(names)
    pool = [s for s in samples if type(s).__name__ == name]
    if rng.random() < 0.25 or depth > 2:
        return copy.deepcopy(rng.choice(pool))
    if name == "bool":
        return rng.random() < 0.5
    if name == "int":
        return rng.randint(min(pool), max(pool))
    if name == "float":
        return round(rng.uniform(min(pool), max(pool)), rng.choice([0, 1, 2]))
    if name == "str":
        chars = sorted(set("".join(pool))) or ["a"]
        n = rng.randint(0, min(max(len(s) for s in pool), 30))
        return "".join(rng.choice(chars) for _ in range(n))
    if name in ("list", "tuple"):
        elements = [e for s in pool for e in s]
        n = rng.randint(0, min(max(len(s) for s in pool), 12)) if elements else 0
        made = [_like(elements, rng, depth + 1) for _ in range(n)]
        return made if name == "list" else tuple(made)
    return copy.deepcopy(rng.choice(pool))


def random_inputs(seeds: list[list[Any]], rng: random.Random, n: int = 40) -> list[list[Any]]:
    """The seeds (at most 40), then up to ``n`` random argument lists shaped like them, without repeats."""
    by_arity: dict[int, list[list[Any]]] = {}
    for s in seeds:
        by_arity.setdefault(len(s), []).append(s)
    out: dict[str, list[Any]] = {}
    for s in seeds[:40]:
        if _literal(s):
            out.setdefault(repr(s), s)
    arities = sorted(by_arity)
    for _ in range(n * 3):
        if len(out) >= len(seeds[:40]) + n or not arities:
            break
        group = by_arity[rng.choice(arities)]
        args = [_like([s[i] for s in group], rng) for i in range(len(group[0]))]
        if _literal(args):
            out.setdefault(repr(args), args)
    return list(out.values())


def _prelude(reference: str, entry: str, inputs: list[list[Any]]) -> str:
    return f"{HELPERS}\n_SOURCE = {reference!r}\n_ENTRY = {entry!r}\n_INPUTS = {inputs!r}\n"


def agreement_check(
    reference: str, entry: str, inputs: list[list[Any]], domain: str = "True", plain: bool = False
) -> str:
    """``check(candidate)``: the candidate's outcome (value or exception class) equals the reference's on
    every input where ``domain`` (an expression over ``args``) holds."""
    return (
        _prelude(reference, entry, inputs)
        + f"""

def check(candidate):
    reference = _reference(_SOURCE, _ENTRY)
    for args in _INPUTS:
        if not ({domain}):
            continue
        want, got = _run(reference, args), _run(candidate, args)
        assert _same(want, got, {plain!r}), ("differs", args, want, got)
"""
    )


def differs_check(reference: str, entry: str, inputs: list[list[Any]], domain: str = "True") -> str:
    """``check(candidate)``: some input where ``domain`` holds shows a different outcome than the reference's."""
    return (
        _prelude(reference, entry, inputs)
        + f"""

def check(candidate):
    reference = _reference(_SOURCE, _ENTRY)
    shown = [args for args in _INPUTS if ({domain}) and not _same(_run(reference, args), _run(candidate, args))]
    assert shown, "no input shows a difference"
"""
    )


def property_check(reference: str, entry: str, inputs: list[list[Any]], prop: str) -> str:
    """``check(candidate)``: ``_property(candidate, reference)`` holds and ``_property(reference, reference)``
    does not (the reference lacks the new behaviour)."""
    return (
        _prelude(reference, entry, inputs)
        + prop
        + """

def check(candidate):
    reference = _reference(_SOURCE, _ENTRY)
    assert _property(candidate, reference), "the new behaviour does not hold"
    assert not _property(reference, reference), "the reference already behaves so"
"""
    )
