"""The Python driver's calls process against code under test that bends its answers: a module that patches
json, builtins, the driver's own ``__main__``, ast or hashlib when imported changes no answer (the process
binds what it uses before any code under test runs); an ImportError a call or a program raises itself is
behaviour, compared like any other exception, while one the import system raises for a module the sandbox
lacks is still no behaviour."""

from __future__ import annotations

import hashlib

import pytest

from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import outcome, program, program_request, request
from memdoor.review.differential.execute import Ran, differences
from memdoor.review.differential.functions import compare_files
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.programs import program_of
from memdoor.review.differential.stdin_inputs import stdin_call, stdin_of
from memdoor.review.differential.targets import Batch, Changed

OLD = "def add_one(x):\n    return x + 1\n"
NEW = "def add_one(x):\n    return x + 2\n"
FIRST_OLD = "def first(x):\n    return x\n\n\n"
FIRST_NEW = "def first(x):\n    return x + 0\n\n\n"
"""A changed function called first, the same on both versions: a patch made while its module loads is in
place for every later call (json.dumps, for one, is looked up before the call that imports the module)."""
DIGEST_OF_2 = hashlib.sha256(b"2").hexdigest()[:32]

PATCHES = {
    "json.dumps": f"""import json

_real = json.dumps


def _as_base(obj, *args, **kwargs):
    if isinstance(obj, dict) and obj.get("r") == "3":
        obj = dict(obj, r="2", h={DIGEST_OF_2!r})
    return _real(obj, *args, **kwargs)


json.dumps = _as_base
""",
    "builtins.repr": """import builtins

_real = builtins.repr
builtins.repr = lambda v: "2" if type(v) is int and v == 3 else _real(v)
""",
    "__main__": """import __main__

_real = getattr(__main__, "_canon", None)
if _real is not None:
    __main__._canon = lambda v, *rest: "2" if v == 3 else _real(v, *rest)
""",
    "ast.literal_eval": """import ast

_real = ast.literal_eval
ast.literal_eval = lambda text: [0] if text == "[1]" else _real(text)
""",
}


async def run_function(sandbox, old: str, new: str, arguments: str) -> Ran:
    """The differences of ``add_one`` (the last changed function of ``calc.py``) from ``old`` to ``new`` on
    one input, in the sandbox, each changed function called once with it, in order."""
    fns = compare_files(old, new, file="calc.py", old_file="calc.py", module="calc", import_root="")
    assert fns[-1].name == "add_one"
    batch = Batch(
        "python",
        program({"calc.py": old}, [""]),
        program({"calc.py": new}, [""]),
        [(i, fn, [Call(text=arguments)]) for i, fn in enumerate(fns)],
        lambda t, c, _k: request(t, c),
        outcome,
    )
    *before, ran = await differences(Judge(sandbox), batch)
    assert all(r.differing == 0 for r in before)
    return ran


def shown(ran: Ran) -> tuple[str, str]:
    """The one reproduced difference, in words."""
    assert ran.reproduced == 1, ran
    (d,) = ran.differences
    return d.old.show(), d.new.show()


@pytest.mark.parametrize("patched", sorted(PATCHES))
async def test_a_module_patching_what_the_driver_uses_does_not_hide_its_change(sandbox, patched):
    ran = await run_function(sandbox, FIRST_OLD + OLD, PATCHES[patched] + "\n\n" + FIRST_NEW + NEW, "[1]")
    assert shown(ran) == ("returns 1", "returns 2")  # its input [1], made [0]


async def test_a_module_patching_hashlib_does_not_hide_a_change_past_the_cut_text(sandbox):
    """A value's text is cut at 600 characters and compared by the digest of the whole."""
    old = "def add_one(x):\n    return 'a' * 700\n"
    new = (
        "import hashlib\n\n_real = hashlib.sha256\n"
        "hashlib.sha256 = lambda data=b'': _real(data.replace(b'ab', b'aa'))\n\n\n"
        "def add_one(x):\n    return 'a' * 699 + 'b'\n"
    )
    ran = await run_function(sandbox, old, new, "[1]")
    assert ran.reproduced == 1
    (d,) = ran.differences
    assert d.old.text == d.new.text and d.old.digest != d.new.digest


@pytest.mark.parametrize("raised", ["ImportError", "ModuleNotFoundError"])
async def test_an_import_error_a_call_raises_itself_is_a_difference(sandbox, raised):
    new = f"def add_one(x):\n    raise {raised}('x')\n"
    ran = await run_function(sandbox, OLD, new, "[0]")
    assert shown(ran) == ("returns 1", f"raises {raised}: x")


PROGRAM_OLD = "import sys\n\nprint(int(sys.stdin.read()) + 1)\n"
PROGRAM_NEW = "import sys\n\nprint(int(sys.stdin.read()) + 2)\nraise ImportError('x')\n"


async def test_an_import_error_a_program_raises_itself_is_a_difference(sandbox):
    target = program_of("tool.py", PROGRAM_OLD, PROGRAM_NEW)
    assert isinstance(target, Changed)
    batch = Batch(
        "python",
        program({"tool.py": PROGRAM_OLD}, [""]),
        program({"tool.py": PROGRAM_NEW}, [""]),
        [(0, target, [stdin_call("1")])],
        lambda t, c, _k: program_request(t.file, stdin_of(c)),
        outcome,
    )
    (ran,) = await differences(Judge(sandbox), batch)
    assert shown(ran) == (
        "prints '2\\n' and exits with status 0",
        "prints '3\\n', then raises ImportError: x",
    )
