"""Chat messages for every step of a team (draft, review, revise, repair, refine, inputs), and the
parsers for what agents answer. Texts live in :mod:`memdoor.prompts`; this module only fills them.

The first-draft prompt is LiveCodeBench's generic chat prompt (system message + ``### Question`` /
``### Format`` / ``### Answer``), so a ``single`` run is the official baseline. HumanEval problems ask
for the complete function. Everything shown to an agent comes from the problem's public view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memdoor.core.messages import Message
from memdoor.core.problem import Problem, TestCase
from memdoor.core.verdict import Verdict
from memdoor.problems.prompt_examples import calls_in_code, json_input
from memdoor.prompts import lines, render
from memdoor.prompts.languages import FENCES, in_language, system_note

CAP = 600
"""Characters of one test input/output shown to an agent before it is cut."""

PEER_CAP = 4000
"""Characters of a teammate's draft shown in a refine prompt (keeps prompts within small contexts)."""


def _cap(text: str | None, limit: int = CAP) -> str:
    text = "" if text is None else text.rstrip("\n")
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


_FORMAT = "\n### Format:"
"""Where every question template's answer format starts."""


def question(problem: Problem, *, answer_format: bool = True) -> str:
    """The ``### Question`` + ``### Format`` part, chosen by how the problem is graded (without the
    ``### Format`` part when ``answer_format`` is False: the task is then not to write the code)."""
    text = _question(problem)
    return text if answer_format else text.split(_FORMAT, 1)[0].rstrip("\n") + "\n\n"


def _question(problem: Problem) -> str:
    if problem.kind == "check" or problem.platform == "humaneval":
        return render(
            "question_function",
            prompt=(problem.starter_code or problem.statement).rstrip(),
            func_name=problem.func_name or "",
        )
    if problem.starter_code:
        return render("question_starter", statement=problem.statement, starter=problem.starter_code)
    if problem.kind == "functional" and problem.func_name:
        return render("question_named", statement=problem.statement, func_name=problem.func_name)
    return render("question_stdin", statement=problem.statement)


def _hint(variant: int) -> str:
    """Prompt variant 0 is the official prompt; variant i > 0 adds one hint line (diversity)."""
    if variant <= 0:
        return ""
    hints = lines("hints")
    return hints[(variant - 1) % len(hints)] + "\n\n"


def _chat(user: str, *, system: str = "system", language: str = "python") -> list[Message]:
    """The messages, in the problem's language (the templates are Python's: prompts.languages)."""
    sys_text = in_language(render(system), language) + system_note(language)
    return [{"role": "system", "content": sys_text}, {"role": "user", "content": in_language(user, language)}]


def draft(problem: Problem, variant: int = 0) -> list[Message]:
    """A first attempt: LiveCodeBench's generic prompt (plus a hint for variants > 0)."""
    return _chat(question(problem) + _hint(variant) + render("answer"), language=problem.language)


def review(problem: Problem, code: str, results: str) -> list[Message]:
    """Ask a reviewer for significant issues, ending with ``VERDICT: OK`` or ``VERDICT: ISSUES``."""
    return _chat(
        question(problem) + render("review", code=code, results=results),
        system="system_reviewer",
        language=problem.language,
    )


def revise(problem: Problem, code: str, results: str, comments: str) -> list[Message]:
    """Ask the author to fix the issues a reviewer listed."""
    body = render("revise", code=code, results=results, review=comments.strip() or "(none)")
    return _chat(question(problem) + body + render("answer"), language=problem.language)


RepairPrompt = Literal["fix", "explain"]
"""fix: ask for the corrected solution; explain: ask first why the output differs, then for a solution
different from the previous one (small models asked to fix often hand the same code back)."""


def repair(problem: Problem, code: str, results: str, prompt: RepairPrompt = "fix") -> list[Message]:
    """Ask for a fix guided by the failing public tests."""
    task = render(f"repair_{prompt}").strip()
    return _chat(
        question(problem) + render("repair", code=code, results=results, task=task) + render("answer"),
        language=problem.language,
    )


@dataclass(frozen=True)
class Peer:
    """A teammate's draft as shown in a refine prompt."""

    agent: str
    code: str
    summary: str
    language: str = "python"


_PEERS = "\x00peers\x00"  # where the peers go once the prompt is in the reader's language


def refine(problem: Problem, code: str, results: str, peers: Sequence[Peer]) -> list[Message]:
    """Ask an agent to refine its draft after reading its teammates' drafts and their results.

    Each peer's code is fenced in its own language (a mixed-language team reads drafts in several)."""
    shown = "".join(
        render(
            "peer", agent=p.agent, summary=p.summary, fence=FENCES[p.language], code=_cap(p.code, PEER_CAP)
        )
        for p in peers
    )
    body = render("refine", code=code, results=results, peers=_PEERS)
    msgs = _chat(question(problem) + body + render("answer"), language=problem.language)
    user = msgs[-1]["content"].replace(_PEERS, shown or "(none)\n\n")
    return [*msgs[:-1], {"role": "user", "content": user}]


def inputs_kind(problem: Problem) -> str:
    """The test kind of agent-written inputs: the problem's own kind, except that HumanEval-style
    ``check`` problems get ``functional`` inputs (JSON arguments of the entry point)."""
    return "functional" if problem.kind == "check" else problem.kind


def inputs(problem: Problem, count: int) -> list[Message]:
    """Ask for ``count`` test inputs (no outputs) that could tell candidate solutions apart. A function's
    inputs are asked for as calls in a Python block, after the question without its answer format (small
    models write calls readily, and copy a format's empty code block instead); a program's as
    ```` ```input ```` blocks of standard input."""
    if inputs_kind(problem) == "functional":
        body = render("inputs_calls", count=count, func_name=problem.func_name or "solution")
        return _chat(question(problem, answer_format=False) + body, language=problem.language)
    fmt = render("input_format_stdin")
    return _chat(
        question(problem) + render("inputs", count=count, input_format=fmt), language=problem.language
    )


def referee(problem: Problem, test: TestCase, outputs: Sequence[str]) -> list[Message]:
    """Ask which of two outputs is right for ``test``'s input (S*'s judged comparison); no code is shown."""
    if test.kind in ("functional", "check") and problem.func_name:
        args = ", ".join(line.strip() for line in test.input.splitlines() if line.strip())
        shown = _cap(f"{problem.func_name}({args})")
    else:
        shown = f"```\n{_cap(test.input)}\n```"
    statement = (
        (problem.starter_code or problem.statement).rstrip() if problem.kind == "check" else problem.statement
    )
    a, b = (_cap(o) for o in outputs)
    return _chat(
        render("referee", statement=statement.rstrip(), input=shown, a=a, b=b),
        system="system_referee",
        language=problem.language,
    )


_ANSWER = re.compile(
    r"^[\s*#>_`$]*(?:\\boxed\{)?[\s*_`]*ANSWER\s*:[ \t]*(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE
)
"""A whole line ``ANSWER: …`` (or ``\\boxed{ANSWER: …}``): words such as "answer B prints 7" in the
reasoning never count."""

_WRAPPING = " \t*_`.'\"$"
_BOXED = re.compile(r"^\\boxed\{(.*)\}$")


def _verdict(value: str) -> str:
    """``**A**``, ``\\boxed{A}``, ``"Yes".`` → ``A``, ``Yes``: Markdown, LaTeX's box and quotes removed."""
    value = value.strip(_WRAPPING)
    boxed = _BOXED.match(value)
    if boxed:
        value = boxed.group(1).strip(_WRAPPING)
    elif value.endswith("}") and "{" not in value:  # the line opened the box: \boxed{ANSWER: A}
        value = value[:-1].strip(_WRAPPING)
    return value


def parse_referee(text: str, outputs: Sequence[str] = ()) -> int | None:
    """The index of the output a referee's last ``ANSWER:`` line names, or None (NEITHER, no such line, or
    a reply cut off before its verdict).

    The line names ``A`` or ``B``; small models also box it (``\\boxed{A}``) or write the value itself
    (``ANSWER: Yes``), which counts when it is exactly one of ``outputs`` (compared without surrounding
    quotes and spaces)."""
    found = _ANSWER.findall(text)
    if not found:
        return None
    value = _verdict(found[-1])
    if value.upper() in ("A", "B", "NEITHER"):
        return {"A": 0, "B": 1}.get(value.upper())
    same = [i for i, o in enumerate(outputs) if _verdict(o) == value]
    return same[0] if len(same) == 1 else None


# ----------------------------------------------------------------------------------------------
# Showing execution results to agents (public tests only) and parsing agents' answers.


def summary(verdict: Verdict | None) -> str:
    """``"2/3 passed"``-style one-liner for a verdict on the public tests."""
    if verdict is None:
        return "not run"
    if not verdict.tests:
        return "no public tests" if verdict.status == "passed" else verdict.status
    return f"{verdict.tests_passed}/{verdict.tests_total} passed"


def results(tests: Sequence[TestCase], verdict: Verdict | None, *, code: str = "x", shown: int = 2) -> str:
    """What an agent is told about a run on the public tests: counts, then up to ``shown`` failures."""
    if not code.strip():
        return "No code was found in the answer: the code must be enclosed in ```python ... ``` delimiters."
    if verdict is None or not tests:
        return "There are no public tests to run."
    head = f"{verdict.tests_passed} of {verdict.tests_total} public tests pass."
    if verdict.passed:
        return head
    parts = [head]
    for i in verdict.failing()[:shown]:
        t, r = tests[i], verdict.tests[i]
        if t.kind == "check":
            parts.append(
                render(
                    "result_check", index=i + 1, status=r.status, input=_cap(t.input), detail=_cap(r.detail)
                )
            )
        else:
            parts.append(
                render(
                    "result_test",
                    index=i + 1,
                    status=r.status,
                    input=_cap(t.input),
                    expected=_cap(t.output),
                    got=_cap(r.output) if r.output is not None else "(none)",
                    detail=_cap(r.detail),
                )
            )
    return "\n".join(parts)


_VERDICT = re.compile(r"VERDICT\W*(OK|ISSUES)\b", re.IGNORECASE)


def parse_review(text: str) -> bool | None:
    """True when the review's last ``VERDICT:`` says OK, False for ISSUES, None when it has none.

    Callers treat None as "issues": a reviewer that does not answer in the format cannot end a loop.
    """
    found = _VERDICT.findall(text)
    if not found:
        return None
    return found[-1].upper() == "OK"


_INPUT_BLOCK = re.compile(r"```[ \t]*input[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_inputs(text: str, problem: Problem, *, limit: int, max_chars: int = 2000) -> list[TestCase]:
    """The ```` ```input ```` blocks of an answer as tests without outputs, of :func:`inputs_kind`.

    Functional inputs must be one JSON value per line; blocks that are not, that are empty, too long
    or repeated are dropped. An answer with no such block that writes calls of the function instead
    (``print(f(1, [2]))``, ``assert f(x) == 3`` after ``x = ...``: what small models tend to write) gives
    their literal arguments.
    """
    kind = inputs_kind(problem)
    out: list[TestCase] = []
    seen: set[str] = set()
    blocks = _INPUT_BLOCK.findall(text)
    if not blocks and kind == "functional" and problem.func_name:
        blocks = [
            json_input(args)
            for args in calls_in_code(text, problem.func_name, limit=4 * limit, language=problem.language)
        ]
    for block in blocks:
        if block is None:
            continue
        body = block.strip("\n")
        if not body.strip() or len(body) > max_chars:
            continue
        if kind == "functional":
            rows = [row.strip() for row in body.splitlines() if row.strip()]
            try:
                for row in rows:
                    json.loads(row)
            except ValueError:
                continue
            body = "\n".join(rows)
        else:
            body += "\n"
        if body in seen:
            continue
        seen.add(body)
        out.append(TestCase(kind=kind, input=body, output=None))
        if len(out) >= limit:
            break
    return out
