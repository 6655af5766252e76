"""Edges of the differential stage's runs, end to end (a real git repository, the real sandbox, a scripted
agent): a program that closes its standard output keeps what it printed; a program or function that
cannot import a module on either version is not run, not "no difference"; an agent's input that is not
UTF-8 text is refused; output that is not a function of the input is no finding: a set of strings iterates
in one order on both versions (Python's calls run with a fixed hash seed), and a coin toss that agrees with
itself by chance on some inputs is nondeterministic, since other inputs of the same kind show it."""

from __future__ import annotations

import pytest
from differential_helpers import commit, review_change
from review_helpers import make_repo

from memdoor.review.differential.json_inputs import json_call, mined_calls, read_json_answer
from memdoor.review.formats import to_markdown
from memdoor.sandbox.lang.run import tool_for

CLOSES = """import sys

xs = [int(x) for x in sys.stdin.read().split()]
print(max(xs, default=0))
sys.stdout.close()
"""
CLOSES_BROKEN = CLOSES.replace("max(xs, default=0)", "min(xs, default=0)")
needs_node = pytest.mark.skipif(not tool_for("javascript").usable, reason="node is missing")


def respond(messages) -> str:
    user = messages[-1]["content"]
    if "### The pull request's description" in user:
        return '```json\n{"verdict": "intended"}\n```'
    return "```json\n[]\n```"


def target(report, name):
    assert report.differential is not None
    (fn,) = [f for f in report.differential.functions if f.name == name]
    return fn


async def test_a_program_that_closes_its_output_keeps_what_it_printed(sandbox, tmp_path):
    root = make_repo(tmp_path / "repo")
    commit(root, "tools/top.py", CLOSES)
    report, _ = await review_change(sandbox, root, "tools/top.py", CLOSES_BROKEN, tmp_path, respond)
    assert target(report, "tools/top.py").outcome == "reported"
    (g,) = report.findings
    ce = g.counterexample
    assert ce is not None and ce.old.startswith("prints '") and ce.new.startswith("prints '")
    assert ce.old != ce.new


MISSING_AT_LOAD = """import sys
import not_a_real_package_memdoor

print(sum(int(x) for x in sys.stdin.read().split()))
"""


async def test_a_program_missing_a_module_on_both_versions_is_not_run(sandbox, tmp_path):
    root = make_repo(tmp_path / "repo")
    commit(root, "tools/total.py", MISSING_AT_LOAD)
    changed = MISSING_AT_LOAD.replace("print(sum(", "print(-sum(")
    report, _ = await review_change(sandbox, root, "tools/total.py", changed, tmp_path, respond)
    fn = target(report, "tools/total.py")
    assert fn.outcome == "not run" and "ModuleNotFoundError" in (fn.note or "")
    assert report.findings == []


LAZY = """def area(w, h):
    import not_a_real_package_memdoor

    return w * h
"""


async def test_a_function_importing_a_missing_module_when_called_is_not_run(sandbox, tmp_path):
    root = make_repo(tmp_path / "repo")
    commit(root, "geometry.py", LAZY)
    report, _ = await review_change(
        sandbox, root, "geometry.py", LAZY.replace("w * h", "h * w"), tmp_path, respond
    )
    fn = target(report, "area")
    assert fn.outcome == "not run" and "not_a_real_package_memdoor" in (fn.note or "")


SIZE = """function size(s) {
  return s.length;
}

module.exports = { size };
"""
SIZE_BYTES = SIZE.replace("s.length", "typeof s === 'string' ? Buffer.from(s).length : s.length")


def test_an_agent_input_that_is_not_utf8_text_is_refused():
    read = read_json_answer('```json\n[["\\ud800"], ["ok"]]\n```', "agent0", 8)
    assert [c.text for c in read.calls] == ['["ok"]'] and len(read.rejected) == 1
    assert json_call(["a\udfffb"]) is None and mined_calls(["size('\\ud800');"], "size") == []


@needs_node
async def test_a_lone_surrogate_never_reaches_the_report(sandbox, tmp_path):
    """Only a lone surrogate tells the two versions apart (its UTF-8 bytes are the replacement character's):
    the agent's input is refused, so no finding holds a text the report cannot write."""
    root = make_repo(tmp_path / "repo")
    commit(root, "lib/size.js", SIZE)

    def agent(messages) -> str:
        return (
            '```json\n[["\\ud800"]]\n```' if "Both versions" in messages[-1]["content"] else respond(messages)
        )

    report, _ = await review_change(sandbox, root, "lib/size.js", SIZE_BYTES, tmp_path, agent)
    assert target(report, "size").rejected == 1 and report.findings == []
    report.model_dump_json()
    to_markdown(report).encode("utf-8")


COLOURS = """def colours(n):
    return list({"red", "green", "blue", "cyan", "magenta", "yellow", "black", "white", "grey"})[:n]
"""
COLOURS_REWRITTEN = COLOURS.replace("    return list(", "    names = ").replace(
    ")[:n]", "\n    return list(names)[:n]"
)
COIN = """import random


def toss(n, m):
    return random.randint(0, 1)
"""
COIN_JS = """function toss(n, m) {
  return Math.random() < 0.5 ? 0 : 1;
}

module.exports = { toss };
"""


async def test_a_set_of_strings_prints_the_same_on_both_versions(sandbox, tmp_path):
    root = make_repo(tmp_path / "repo")
    commit(root, "palette.py", COLOURS)
    report, _ = await review_change(sandbox, root, "palette.py", COLOURS_REWRITTEN, tmp_path, respond)
    fn = target(report, "colours")
    assert fn.outcome == "no difference" and fn.inputs > 5 and fn.differing == 0
    assert report.findings == []


@pytest.mark.parametrize(
    ("path", "base", "changed"),
    [
        pytest.param("coin.py", COIN, COIN.replace("randint(0, 1)", "choice((0, 1))"), id="python"),
        pytest.param(
            "coin.js",
            COIN_JS,
            COIN_JS.replace("< 0.5 ? 0 : 1", ">= 0.5 ? 1 : 0"),
            marks=needs_node,
            id="javascript",
        ),
    ],
)
async def test_a_coin_toss_is_nondeterministic_not_a_finding(sandbox, tmp_path, path, base, changed):
    """Half the inputs differ on the first run, and an eighth agree with themselves by chance; those whose
    version gave the other value when run again show the group nondeterministic."""
    root = make_repo(tmp_path / "repo")
    commit(root, path, base)
    report, _ = await review_change(sandbox, root, path, changed, tmp_path, respond)
    fn = target(report, "toss")
    assert fn.differing > 0 and fn.reproduced == 0 and fn.outcome == "not reproduced", (
        fn.inputs,
        fn.differing,
    )
    assert report.findings == [] and report.differential is not None
    assert all(d.nondeterministic for d in report.differential.not_reproduced)


LABEL = """import uuid


def label(name):
    if name == "session":
        return "session:" + uuid.uuid4().hex
    return "user:" + name
"""


async def test_one_random_input_does_not_hide_a_deterministic_difference_of_its_kind(sandbox, tmp_path):
    """'session' gives another token on every run; 'bob' gives 'user:bob' on the base and 'USER:bob' on the
    change every time, so its difference is kept though both return a string."""
    root = make_repo(tmp_path / "repo")
    commit(root, "labels.py", LABEL)

    def agent(messages) -> str:
        if "Both versions" in messages[-1]["content"]:
            return "```json\n[[\"'session'\"], [\"'bob'\"]]\n```"
        return respond(messages)

    changed = LABEL.replace('"user:" + name', '"USER:" + name')
    report, _ = await review_change(sandbox, root, "labels.py", changed, tmp_path, agent)
    fn = target(report, "label")
    assert fn.outcome == "reported" and report.differential is not None
    assert [d.input.text for d in report.differential.not_reproduced] == ["['session']"]
    (g,) = report.findings
    assert g.counterexample is not None and "USER:" in g.counterexample.new


async def test_a_module_only_the_change_imports_and_the_sandbox_lacks_is_a_note_not_a_difference(
    sandbox, tmp_path
):
    root = make_repo(tmp_path / "repo")
    commit(root, "geometry.py", "def area(w, h):\n    return w * h\n")
    changed = "import not_a_real_package_memdoor\n\n\ndef area(w, h):\n    return h * w\n"
    report, _ = await review_change(sandbox, root, "geometry.py", changed, tmp_path, respond)
    fn = target(report, "area")
    assert fn.outcome == "not run" and fn.differing == 0 and report.findings == []
    assert (fn.note or "").startswith("it cannot be called in the sandbox on the change: ModuleNotFoundError")
