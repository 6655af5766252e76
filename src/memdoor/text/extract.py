"""Getting code out of a model's answer: the LiveCodeBench way (:func:`extract_code`, what ``memdoor
grade`` applies to official samples), and a team member's candidate (:func:`candidate_code`)."""

from __future__ import annotations

from memdoor.core.problem import Problem
from memdoor.text.clean import drop_demo_lines
from memdoor.text.clean_js import drop_console_lines

FENCE = "```"


def extract_code(answer: str) -> str:
    """The lines strictly between the last two lines containing three backticks; "" when fewer than two.

    This is LiveCodeBench's rule for chat models (``extract_code`` with the OpenAI chat style).
    """
    lines = answer.split("\n")
    fences = [i for i, line in enumerate(lines) if FENCE in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


def candidate_code(answer: str, problem: Problem) -> str:
    """The code a team member proposes in ``answer``: :func:`extract_code`, then, for a function answer
    (a functional or check problem), without the demo lines a model adds around the function: in Python
    example calls, prints and ``# Output:`` comments (:mod:`memdoor.text.clean`), in JavaScript top-level
    ``console`` calls (:mod:`memdoor.text.clean_js`). A program reading standard input stays whole, and so
    does a Rust answer. Strategies take every candidate through here, before anything runs it, so the
    program graded is the program the user gets."""
    code = extract_code(answer)
    if problem.kind == "stdin" or not problem.func_name:
        return code
    if problem.language == "python":
        return drop_demo_lines(code, problem.func_name)
    if problem.language == "javascript":
        return drop_console_lines(code, problem.func_name)
    return code
