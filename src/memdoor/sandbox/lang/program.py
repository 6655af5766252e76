"""The program that runs for a JavaScript or Rust answer: the grading prefix (HumanEval-X's prompt, which ends
with the function's opened signature) then the answer.

An official-style completion is the function's body: it follows the prefix as is. A team's answer is the
whole function (signature included, as Python's HumanEval answers are): the prefix's opened signature of
that function is then left out, so the answer's own definition replaces it (the rest of the prefix stays:
the prompt's helpers such as ``encodeCyclic``, and Rust's ``use`` lines and empty ``main`` unless the answer
brings its own)."""

from __future__ import annotations

import re


def _definition(language: str, name: str) -> re.Pattern[str]:
    """A top-level definition of ``name``: at the start of a line (a completion's body is indented, and may
    declare a variable of the function's own name, as JavaScript/106 does)."""
    if language == "javascript":
        keyword = r"(?:export\s+)?(?:async\s+)?(?:const|let|var|function\*?)"
    else:
        keyword = r"(?:pub(?:\([^)]*\))?\s+)?fn"
    return re.compile(rf"^{keyword}\s+{re.escape(name)}\b", re.M)


def defines(language: str, code: str, name: str) -> bool:
    """``code`` holds its own definition of the function ``name`` (a whole-function answer)."""
    return bool(_definition(language, name).search(code))


def join(language: str, prefix: str, code: str, name: str | None) -> str:
    """``prefix`` then ``code``; for a whole-function answer, without the prefix's last opened signature of
    ``name`` (from its definition to the first ``{`` after it)."""
    if not prefix:
        return code
    if name and defines(language, code, name):
        found = list(_definition(language, name).finditer(prefix))
        if found:
            start = found[-1].start()
            brace = prefix.find("{", found[-1].end())
            if brace >= 0:
                prefix = prefix[:start] + prefix[brace + 1 :]
        if language == "rust":
            prefix = _rust_whole(prefix, code)
    return f"{prefix}\n{code}"


_RUST_MAIN = re.compile(r"fn\s+main\s*\(\s*\)\s*\{\s*\}")
_RUST_USE = re.compile(r"^use\s[^\n]*;[ \t]*$", re.M)


def _rust_whole(prefix: str, code: str) -> str:
    """A whole Rust answer that brings its own ``main`` or ``use`` lines replaces the prefix's (Rust refuses
    a second ``main`` and a name imported twice)."""
    if re.search(r"^\s*(?:pub\s+)?fn\s+main\s*\(", code, re.M):
        prefix = _RUST_MAIN.sub("", prefix, count=1)
    if _RUST_USE.search(code):
        prefix = _RUST_USE.sub("", prefix)
    return prefix


def completion(language: str, code: str, name: str | None) -> str:
    """What the official HumanEval-X harness must append to the prompt to run ``code``: a completion (the
    body) as is; a whole-function answer becomes the body after its signature, then what came before that
    (helpers: JavaScript evaluates them before any test calls the function; Rust items have no order). For
    Rust, an answer's own ``main`` is left out (the harness has one) and its ``use`` lines move to the top
    of the function's body, where they may name what the prompt's declaration imports already."""
    if not name or not defines(language, code, name):
        return code
    found = list(_definition(language, name).finditer(code))[-1]
    brace = code.find("{", found.end())
    if brace < 0:
        return code
    before, body = code[: found.start()], code[brace + 1 :]
    if language == "rust":
        before, body = _RUST_MAIN.sub("", before), _RUST_MAIN.sub("", body)
        uses = _RUST_USE.findall(before)
        before = _RUST_USE.sub("", before)
        body = "\n".join(f"    {u.strip()}" for u in uses) + body if uses else body
    return f"{body}\n{before}" if before.strip() else body
