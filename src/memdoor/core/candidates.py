"""Records passed to and returned by selectors."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from memdoor.core.verdict import Verdict

DuelWhen = Literal["contested", "split"]
"""When a referee judges between the two leading behaviour groups: ``contested``, only when no group holds
a strict majority of the survivors; ``split``, whenever the survivors behave in two or more ways (S*'s
judged comparison decides rather than the head count)."""


class Candidate(BaseModel):
    """One candidate solution produced by an agent."""

    code: str = Field(description="Extracted code (may be empty when the answer had no code block).")
    agent: str = Field(description="Id of the agent that wrote it.")
    round: int = Field(default=0, description="Round or repair step that produced it (0 = first draft).")
    mean_logprob: float | None = Field(default=None, description="Mean token log-probability of the answer.")
    rewrite: bool = Field(
        default=False,
        description="Written from code shown in its prompt (a repair, revision or refinement), not drafted "
        "afresh: copying raises its log-probabilities, so its confidence is not comparable with a draft's.",
    )
    public: Verdict | None = Field(default=None, description="Its verdict on the public tests, once run.")
    language: str | None = Field(
        default=None,
        description="The language it is written in; None: the problem's own (set in mixed-language teams).",
    )


class Duel(BaseModel):
    """Two behaviour groups compared on one input where their outputs differ, settled by a referee."""

    groups: tuple[int, int] = Field(
        description="The two groups (indices into Selection.groups), leader first."
    )
    test: int = Field(description="Index of the input among the public tests then the agent-written inputs.")
    input: str = Field(description="The input (public or agent-written, never hidden).")
    outputs: tuple[str, str] = Field(description="What each group printed or returned on it.")
    winner: int | None = Field(
        description="0 or 1: the group the referee found right; None: it could not tell."
    )


class Selection(BaseModel):
    """What a selector chose and why."""

    index: int | None = Field(description="Index of the chosen candidate; None when there were none.")
    confidence: float = Field(default=0.0, description="0..1: share of weight behind the chosen group.")
    reason: str = Field(default="", description="majority, confidence, only-one, no-survivor, none, ...")
    groups: list[list[int]] = Field(
        default_factory=list, description="Candidate indices grouped by behaviour."
    )
    survivors: list[int] = Field(default_factory=list, description="Candidates that passed the public tests.")
    votes: dict[str, float] = Field(default_factory=dict, description="Weight per group (key: group index).")
    rule: str = Field(
        default="",
        description="The rule that chose among the groups: majority, confidence or only-one "
        "(with reason no-survivor it tells how the fallback pool was decided).",
    )
    k: int | None = Field(
        default=None, description="Group size that counted as a majority (the k of N rule)."
    )
    public_verdict: Verdict | None = Field(
        default=None, description="The chosen candidate's verdict on the public tests, when it was run."
    )
    duel: Duel | None = Field(
        default=None, description="The referee's comparison of the two leading groups, when one was asked."
    )

    def agreeing(self) -> int:
        """Candidates in the chosen one's behaviour group (itself alone without groups); 0 when none was chosen."""
        if self.index is None:
            return 0
        return len(next((g for g in self.groups if self.index in g), [self.index]))
