"""Mentions of a function in the prose of a request (``write is_prime(n)``, "a function named f"), and
how strongly the request asks for each: the words just before a mention decide (a request verb, or an
aside such as "my helper").
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

from memdoor.problems.request_lines import FENCED, usable
from memdoor.problems.signatures import Target, is_method, signature_params, signature_starter


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_MENTIONS = 1000
"""Signatures and names read from one request, at most (of each kind): a bound on the work."""
_LOOK = 300
"""Characters read around a mention (the words before it, the annotation after it)."""
_MATH = re.compile(r"\$[^$\n]*\$")
_PROSE_SIG = re.compile(r"(?<![\w.$\\])(?:(def)\s+)?(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\(([^()\n]*)\)")
_NAMES = [
    # function `name` / function named name / method called name / func name
    re.compile(
        r"\b(?:function|method|func)\s+(?:(?P<how>named|called)\s+)?(?P<tick>[`*]*)(?P<name>[A-Za-z_]\w*)[`*]*",
        re.IGNORECASE,
    ),
    # the function should be called name / name the function name / function name: name
    re.compile(
        r"\b(?:function|method)\b[^.\n]{0,40}?\b(?:be|is)\s+(?P<how>named|called)\s+(?P<tick>[`*]*)"
        r"(?P<name>[A-Za-z_]\w*)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?P<how>name|call)\s+(?:the\s+|your\s+)?(?:function|method)\s+(?P<tick>[`*]*)(?P<name>[A-Za-z_]\w*)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:function|method)\s+(?P<how>name)\s*(?:is|:|=)?\s*(?P<tick>[`*]*)(?P<name>[A-Za-z_]\w*)",
        re.IGNORECASE,
    ),
]
_NOT_NAMES = _words("""that which who whose to for in with of the a an and or named called returning taking accepting using
    python is should must will can could would here below above signature definition body from on it this
    so as by into we i you that's name names call calls returns takes computing""")
_NAME_FOLLOWERS = _words("that which to taking returning for with , : . ; ( who")
_ASK = _words("""write writing implement implementing create code complete finish make build need want provide add
    fix give rewrite""")
_KIND = _words("function method func def called named signature name")
_ASIDE = _words("""helper given have has already existing using use uses call calls calling from my like instead
    don't dont not without let program script prints print""")
_AS = frozenset({"as", "into"})
_SENTENCE_END = re.compile(r"(?:[.!?](?=\s)|\n\s*\n|[;\n])")
_DEFINED_AS = re.compile(r"\s*(?:is\s+defined|be\s+defined|be\b|denotes?\b|as\b|is\s+the\b)", re.IGNORECASE)


@dataclass(frozen=True)
class _Mention:
    score: int
    pos: int
    target: Target


def _prose_of(text: str) -> str:
    """``text`` with fenced code and ``$...$`` math blanked out (offsets kept)."""
    text = FENCED.sub(lambda m: " " * len(m.group(0)), text)
    return _MATH.sub(lambda m: " " * len(m.group(0)), text)


def ask_score(prose: str, pos: int, starts: list[int]) -> int:
    """How strongly the words just before ``pos`` (same sentence, last eight words) ask for what
    follows. The nearest request verb or aside decides: +2 for a request ("write", "implement"),
    -3 for an aside (a helper, something given, used, "my" existing code, a program); +1 for a
    "function"-like word, +1 for "as"/"into" right before (rewrite X *as* Y). ``starts``: where the
    sentences of ``prose`` start, in order."""
    start = max(starts[bisect.bisect_right(starts, pos) - 1], pos - _LOOK)
    words = [w for w in (w.strip("`*,:;()'\"").lower() for w in prose[start:pos].split()) if w][-8:]
    score = 0
    for k in range(len(words) - 1, -1, -1):
        w = words[k]
        if w in _ASK or (w == "define" and words[k + 1 : k + 2] in (["a"], ["an"])):  # not "define f(x) as"
            score += 2
            break
        if w in _ASIDE:
            score -= 3
            break
    if any(w in _KIND for w in words):
        score += 1
    if any(w in _AS for w in words[-3:]):
        score += 1
    return score


def prose_mentions(text: str) -> list[_Mention]:
    """Functions the prose names: backticked or plain signatures, ``def name(...)``, and names after
    "function", "named", "called"; each with how strongly the request asks for it."""
    prose = _prose_of(text)
    starts = [0, *(m.end() for m in _SENTENCE_END.finditer(prose))]
    found: list[_Mention] = []
    for m in itertools.islice(_PROSE_SIG.finditer(prose), MAX_MENTIONS):
        is_def, name, params = m.group(1), m.group(2), m.group(3)
        if not usable(name):
            continue
        names = signature_params(name, params)
        ticked = prose[max(0, m.start() - 1) : m.start()] == "`"
        score = ask_score(prose, m.start(), starts) + (1 if is_def else 0)
        if not ticked and (
            names is None or score < (1 if is_def else 2) or _DEFINED_AS.match(prose, m.end())
        ):
            continue  # not asked for (plain-text math, "the values of function f(l, r)"), or defined as a formula
        # a backticked signature is code to start from (not a method's: it needs its class)
        ret = _return_annotation(prose[m.end() : m.end() + _LOOK])
        starter = (
            signature_starter(name, params, ret)
            if ticked and names is not None and not is_method(params)
            else ""
        )
        kind = "def" if is_def else "signature"
        found.append(_Mention(score, m.start(), Target(name, starter, names, kind)))
    for pattern in _NAMES:
        for m in itertools.islice(pattern.finditer(prose), MAX_MENTIONS):
            name = m.group("name")
            if not usable(name) or name.lower() in _NOT_NAMES:
                continue
            after = prose[m.end() : m.end() + _LOOK].lstrip()
            if after.startswith("("):
                continue  # a signature: read above
            if not (m.group("how") or m.group("tick")):
                follower = after.split(maxsplit=1)[0].lower() if after else "."
                if not (_codey(name) or follower in _NAME_FOLLOWERS or follower[:1] in ",:.;"):
                    continue
            found.append(
                _Mention(ask_score(prose, m.start(), starts) + 1, m.start(), Target(name, "", None, "named"))
            )
    return found


def _codey(name: str) -> bool:
    """A name no one would write as an ordinary word: snake_case, camelCase or with digits."""
    return "_" in name.strip("_") or any(c.isdigit() for c in name) or any(c.isupper() for c in name[1:])


def _return_annotation(after: str) -> str | None:
    """The return annotation at the start of ``after`` (`` -> list[int]``), brackets balanced."""
    m = re.match(r"\s*->\s*", after)
    if not m:
        return None
    depth, i = 0, m.end()
    while i < len(after):
        c = after[i]
        if c in "[(":
            depth += 1
        elif c in "])":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (c in " \t\n,;:`" or (c == "." and not after[i + 1 : i + 2].isalnum())):
            break
        i += 1
    return after[m.end() : i] or None


def best_mention(mentions: list[_Mention]) -> Target | None:
    """The mention asked for most strongly (the first among equals), with the parameters of another
    mention of the same name when it has none."""
    if not mentions:
        return None
    best = max(mentions, key=lambda m: (m.score, -m.pos))
    if best.target.params is None:
        same = [
            m for m in mentions if m.target.func_name == best.target.func_name and m.target.params is not None
        ]
        if same:
            return same[0].target
    return best.target
