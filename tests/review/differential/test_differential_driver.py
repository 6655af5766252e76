"""The Python driver program in the real sandbox: what it reports for a call or a program run, whatever
the version's files are."""

from __future__ import annotations

import json

from memdoor.core.problem import TestCase
from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import CallOutcome, from_mark, outcome, program, program_request
from memdoor.review.differential.execute import run_version


async def run(sandbox, files: dict[str, str], tests: list[TestCase]) -> list[CallOutcome]:
    """The outcomes of the driver program carrying ``files`` on ``tests``."""
    return await run_version(Judge(sandbox), program(files, [""]), tests, outcome)


async def test_a_version_without_python_files_cannot_run_the_program_and_does_not_crash(sandbox):
    (found,) = await run(sandbox, {}, [program_request("bin/tool.py", "1 2\n")])
    assert found.kind == "import" and found.type == "FileNotFoundError"


def call(module: str, name: str, arguments: str = "[]") -> TestCase:
    """The test that calls ``module.name`` with the arguments' literal text."""
    return TestCase(kind="stdin", input=json.dumps({"m": module, "f": name, "c": "function", "a": arguments}))


async def test_a_lone_surrogate_in_a_message_or_a_value_is_written_escaped(sandbox):
    files = {
        "odd.py": "def fail():\n    raise ValueError(chr(0xD800))\n\n\ndef give():\n    return chr(0xDFFF)\n"
    }
    raised, returned = await run(sandbox, files, [call("odd", "fail"), call("odd", "give")])
    assert (raised.kind, raised.text) == ("raise", "\\ud800")
    assert (returned.kind, returned.text) == ("return", "'\\udfff'")
    raised.model_dump_json(), returned.model_dump_json()


def test_every_driver_s_result_line_with_a_lone_surrogate_can_be_written():
    found = from_mark({"k": "exit", "t": "exit status 0", "r": "\ud83d!", "h": "0" * 32, "m": "\udc00"})
    assert (found.text, found.message) == ("\\ud83d!", "\\udc00")
    assert '"\\\\ud83d!"' in found.model_dump_json()


PROBE = """import os
import signal
import sys


def flags():
    packages = any(p.endswith("-packages") for p in sys.path)
    return [sys.flags.no_site, sys.flags.no_user_site, "site" in sys.modules, packages]


def colours():
    return list({"red", "green", "blue", "cyan", "magenta", "yellow", "black", "white", "grey"})


def vanish():
    os.kill(os.getpid(), signal.SIGKILL)
"""


async def test_the_calls_run_without_site_packages_and_with_a_fixed_string_hash(sandbox):
    """The calls' interpreter loads no ``site`` (no dist-packages, as the harness's ``-I -S``), and a set of
    strings iterates in one order in every run (``-I`` would ignore PYTHONHASHSEED)."""
    first = await run(sandbox, {"probe.py": PROBE}, [call("probe", "flags"), call("probe", "colours")])
    second = await run(sandbox, {"probe.py": PROBE}, [call("probe", "colours")])
    assert first[0].text == "[1, 1, False, False]"
    assert first[1].kind == "return" and first[1].text == second[0].text


async def test_a_call_whose_process_is_killed_like_the_memory_killer_kills_runs_out_of_memory(sandbox):
    """The kernel kills a group that is out of memory with SIGKILL, as the harness's own process would be."""
    killed, after = await run(sandbox, {"probe.py": PROBE}, [call("probe", "vanish"), call("probe", "flags")])
    assert killed.kind == "memory" and killed.show() == "runs out of memory"
    assert after.text == "[1, 1, False, False]"  # the next call starts another process
