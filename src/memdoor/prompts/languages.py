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
    for old, new in (
        ("```python", "```" + FENCES[language]),
        ("Python function", f"{name} function"),
        ("python program", f"{name} program"),
        ("Python program", f"{name} program"),
        ("Python programmer", f"{name} programmer"),
        ("# YOUR CODE HERE", "// YOUR CODE HERE"),
    ):
        text = text.replace(old, new)
    return text


def system_note(language: str) -> str:
    """The line added to the system message for ``language`` ('' for Python)."""
    return "" if language == "python" else " " + HOW_IT_RUNS[language]
