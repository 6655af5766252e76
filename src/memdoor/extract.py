"""Getting code out of a model's answer, the LiveCodeBench way."""

from __future__ import annotations

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
