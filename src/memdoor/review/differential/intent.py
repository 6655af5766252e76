"""Intended or not: each reproduced difference judged against the change's description.

The description is the specification. One that says the change is a refactoring (:func:`says_refactor`:
"refactor", "no behaviour change", "no functional change"; or only tidying — "cleanup", "tidy up",
"readability", "simplify" — with no behaviour asked for) makes every difference unintended
without asking anyone; only the user's description can say so, never a commit message of the range. Without a description nothing can be judged: a difference is reported as
"behaviour changed". Otherwise each agent reads the description, the function before and after, and the
difference — all fenced, introduced as data — and answers ``{"verdict": "intended" | "unintended" |
"unclear"}``; a verdict given by at least ⌈N/2⌉ of the N agents, and by more agents than the opposite
one, decides (:func:`decide`); anything else is unclear.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Literal

from memdoor.agents.calls import CallContext
from memdoor.agents.team import Agent
from memdoor.core.errors import BudgetExceeded, ModelError
from memdoor.core.messages import Message
from memdoor.prompts import render
from memdoor.review.consensus import quorum
from memdoor.review.differential.execute import Difference
from memdoor.review.differential.targets import FENCE_TAG, Target, kind_of, language_of
from memdoor.review.fence import fence, inline

Verdict = Literal["intended", "unintended", "unclear"]
Rule = Literal["refactoring", "no description", "agents"]

MAX_DESCRIPTION_CHARS = 6000
"""Characters of the description put in a prompt (the rest is cut, marked)."""
_REFACTOR = re.compile(
    r"\brefactor|\bno (?:user[- ]visible |observable |externally visible )?"
    r"(?:behaviou?r(?:al)?|functional|semantic) changes?\b|\bbehaviou?r[- ]preserving\b",
    re.IGNORECASE,
)
_TIDYING = re.compile(
    r"\bclean[- ]?ups?\b|\bclean(?:s|ed|ing)? up\b|\btid(?:y|ies|ied|ying)\b|\breadab(?:le|ility)\b|"
    r"\bsimplif(?:y|ies|ied|ying|ication)\b|\bcosmetic\b|\bpolish(?:es|ed|ing)?\b",
    re.IGNORECASE,
)
_ASKS_BEHAVIOUR = re.compile(
    r"\b(?:(?:make|let|give|return|raise|rais|throw|accept|reject|add|support|handle|fix|allow|change|ignore|"
    r"treat|round|print|format|use|error|output)(?:s|es|ed|d|ing|ting|ted)?|making|made|letting|gave|"
    r"giving|threw|thrown|handling|changing|using|default|defaults|should|must|now|when|unless|"
    r"not a refactor\w*)\b",
    re.IGNORECASE,
)
_CODE_SPAN = re.compile(r"`[^`\n]{0,200}`")
_WORD = re.compile(r"\b(unintended|intended|unclear)\b", re.IGNORECASE)


def says_refactor(description: str | None) -> bool:
    """Whether the description says the change keeps behaviour (a simple rule on its words): it says
    "refactor" or "no behaviour change", or it only tidies ("clean up", "tidy", "readability",
    "simplify"), and in either case asks for no behaviour: no "make", "return", "raise", "default", "fix",
    "when", "now", "output", ... outside its `code` spans. "Tidy up the loop" and "Rename `x`; no
    behaviour change" keep behaviour; "Simplify f: return None on empty", "Refactor the parser and fix
    the off-by-one" and "No behaviour change for valid input; invalid input now raises" go to the agents."""
    text = _CODE_SPAN.sub(" ", description or "")
    if not (_REFACTOR.search(text) or _TIDYING.search(text)):
        return False
    return _ASKS_BEHAVIOUR.search(_REFACTOR.sub(" ", text)) is None


def rule_for(description: str | None, commit_messages: str | None = None) -> Rule:
    """The rule for ``description`` (the user's own): refactoring only when it says so. The range's commit
    messages never make that rule (one "clean up imports" commit must not turn a feature's every
    difference unintended); they only give the agents something to judge by."""
    if says_refactor(description):
        return "refactoring"
    if not (description or "").strip() and not (commit_messages or "").strip():
        return "no description"
    return "agents"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n… (cut)"


def messages_for(description: str, fn: Target, d: Difference) -> list[Message]:
    """The question for one difference: every text from the pull request or its run fenced."""
    old, new = fn.excerpts()
    tag = FENCE_TAG[language_of(fn)]
    shared = {
        "description": fence(_cut(description.strip(), MAX_DESCRIPTION_CHARS)),
        "old": fence(old, tag),
        "new": fence(new, tag),
        "old_result": fence(d.old.show()),
        "new_result": fence(d.new.show()),
    }
    if kind_of(fn) == "program":
        user = render(
            "code_review_intent_program", program=inline(fn.name), stdin=fence(d.input.arguments), **shared
        )
    else:
        user = render("code_review_intent", function=inline(fn.name), call=fence(d.call_text()), **shared)
    return [
        {"role": "system", "content": render("code_review_exec_system")},
        {"role": "user", "content": user},
    ]


def read_verdict(text: str) -> Verdict | None:
    """The verdict of an answer: the ``verdict`` of its JSON, else the one verdict word it uses (None when
    it uses none or several)."""
    for m in re.finditer(r"\{[^{}]*\}", text):
        try:
            data = json.loads(m.group(0))
        except ValueError:
            continue
        v = data.get("verdict") if isinstance(data, dict) else None
        if isinstance(v, str) and v.strip().lower() in ("intended", "unintended", "unclear"):
            return v.strip().lower()  # type: ignore[return-value]
    words = {w.lower() for w in _WORD.findall(text)}
    return words.pop() if len(words) == 1 else None  # type: ignore[return-value]


async def ask_verdict(
    agent: Agent, description: str, fn: Target, d: Difference, ctx: CallContext, logprobs: bool
) -> tuple[str, Verdict | None, str | None, bool]:
    """``(agent, verdict or None, error, budget spent)``: one agent's answer on one difference; a model
    failure or the budget is no vote, never a crash."""
    try:
        resp = await agent.ask(
            messages_for(description, fn, d), ctx, role="differential-intent", logprobs=logprobs
        )
    except BudgetExceeded as e:
        return agent.id, None, f"budget: {e}", True
    except ModelError as e:
        return agent.id, None, f"{type(e).__name__}: {e}", False
    text = resp.completions[0].text
    verdict = read_verdict(text)
    await ctx.event(
        "intent", agent.id, function=fn.name, input=d.input.text, verdict=verdict, text=text[:4000]
    )
    return agent.id, verdict, None if verdict else "no verdict in the answer", False


def decide(votes: dict[str, Verdict | None], agents: int) -> Verdict:
    """The team's verdict: one given by at least ⌈N/2⌉ agents and by more than the opposite one."""
    count = Counter(v for v in votes.values() if v is not None)
    need = quorum(agents)
    for verdict, other in (("intended", "unintended"), ("unintended", "intended")):
        if count[verdict] >= need and count[verdict] > count[other]:
            return verdict  # type: ignore[return-value]
    return "unclear"
