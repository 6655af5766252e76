"""The prompts for answers in JavaScript or Rust: the templates are written for Python; this swaps their
language-specific phrases (code fences, "Python function", "python program", comment syntax) and adds one
line on how the language's program is run. Only the templates' own phrases are replaced, so problem text
that happens to say "Python" elsewhere is left alone."""

from __future__ import annotations

NAMES = {"python": "Python", "javascript": "JavaScript", "rust": "Rust"}
FENCES = {"python": "python", "javascript": "javascript", "rust": "rust"}
HOW_IT_RUNS = {
    "javascript": "Your code runs with Node.js (no npm packages); a program reads all of standard input with "
    "require('fs').readFileSync(0, 'utf8').",
    "rust": "Your code is compiled with rustc (edition 2021; only the standard library and the crates rand, "
    "regex and md5); a program is a complete `fn main()` reading standard input.",
}


def in_language(text: str, language: str) -> str:
    """``text`` (a rendered Python prompt) asking for ``language`` instead; unchanged for Python."""
    if language == "python":
        return text
    name = NAMES[language]
    fence = "```" + FENCES[language]
    # The official Python format shows an empty block to fill ("# YOUR CODE HERE"); in another language the
    # 1.5B model copied it back as its whole answer (12 of 12 HumanEval-X JavaScript problems), so other
    # languages name the block instead of showing it (benchmarks: docs/results-log.md, "Per language").
    text = text.replace("\n```python\n# YOUR CODE HERE\n```\n", "\n")
    text = text.replace("enclose your code within delimiters.", f"enclose it in one {fence} code block.")
    text = text.replace(
        "Enclose your code within delimiters as follows.", f"Enclose your code in one {fence} code block."
    )
    for old, new in (
        ("```python", fence),
        ("Python function", f"{name} function"),
        ("python program", f"{name} program"),
        ("Python program", f"{name} program"),
        ("Python programmer", f"{name} programmer"),
    ):
        text = text.replace(old, new)
    return text


def system_note(language: str) -> str:
    """The line added to the system message for ``language`` ('' for Python)."""
    return "" if language == "python" else " " + HOW_IT_RUNS[language]
