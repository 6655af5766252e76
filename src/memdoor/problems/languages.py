"""Answering problems in another language (``--language``): a standard-input problem has the same tests in
every language, so any language can answer it; function and ``check`` problems keep their own."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memdoor.core.errors import UsageError
from memdoor.core.problem import Problem

LANGUAGES = ("python", "javascript", "rust")


def in_language(problems: Sequence[Problem], language: str | None) -> list[Problem]:
    """``problems`` to be answered in ``language`` (None: each in its own). UsageError when a problem's tests
    only fit its own language (function calls, HumanEval ``check`` code)."""
    if language is None:
        return list(problems)
    if language not in LANGUAGES:
        raise UsageError(f"unknown language {language!r} (choose from: {', '.join(LANGUAGES)})")
    fixed = [p for p in problems if p.language != language and any(t.kind != "stdin" for t in p.all_tests)]
    if fixed:
        raise UsageError(
            f"--language {language}: only standard-input problems can be answered in any language; "
            f"{fixed[0].id} is a {fixed[0].language} {fixed[0].kind} problem"
            + (f" (and {len(fixed) - 1} more)" if len(fixed) > 1 else "")
        )
    return [p if p.language == language else p.model_copy(update={"language": language}) for p in problems]


def parse_languages(text: str, where: str, *, sep: str = ",") -> list[str]:
    """``python,javascript`` → ``["python", "javascript"]``; UsageError naming ``where`` for an empty or
    unknown language."""
    items = [x.strip().lower() for x in text.split(sep)]
    bad = next((x for x in items if x not in LANGUAGES), None)
    if bad is not None:
        raise UsageError(
            f"bad {where}: unknown language {bad!r} (choose from: {', '.join(LANGUAGES)}, joined by {sep!r})"
        )
    return items


def answer_in(problem: Problem, language: str | None) -> Problem:
    """``problem`` as an agent answering in ``language`` sees and runs it (None or its own language: itself).
    Only a standard-input problem can change language (its tests are the same in every language); a
    mixed-language team is refused for any other before it starts (:func:`check_mixable`)."""
    if language is None or language == problem.language:
        return problem
    return problem.model_copy(update={"language": language})


def check_mixable(problem: Problem, languages: Sequence[str]) -> None:
    """UsageError unless ``problem`` can be answered in every one of ``languages`` (a mixed-language team)."""
    for language in languages:
        in_language([problem], language)


_ASKS = {
    "javascript": re.compile(
        r"```(?:javascript|js)\b|\b(?:in|using|with|write|written in|a|an)\s+(?:javascript|js|node(?:\.?js)?)\b"
        r"|\bjavascript\s+(?:function|program|code|solution)\b",
        re.IGNORECASE,
    ),
    "rust": re.compile(
        r"```rust\b|\b(?:in|using|with|write|written in|a)\s+rust\b|\brust\s+(?:function|program|code|solution)\b",
        re.IGNORECASE,
    ),
}


_TARGET = re.compile(r"\b(?:to|into)\s+(javascript|js|node(?:\.?js)?|rust)\b", re.IGNORECASE)


def requested_language(text: str) -> str:
    """The language a request asks the answer in ("in Rust", "a JavaScript function", a ```js fence, "port
    it to Rust"...); python when it names none, or names several and none as the target."""
    targets = {"rust" if m.lower() == "rust" else "javascript" for m in _TARGET.findall(text)}
    if len(targets) == 1:
        return targets.pop()
    asked = [language for language, pattern in _ASKS.items() if pattern.search(text)]
    return asked[0] if len(asked) == 1 else "python"
