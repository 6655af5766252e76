"""The review's stages by name, and the one check of a list of them that the command line (``--stages``)
and a server's request (``review.stages``) share: known names, at least one, put in the pipeline's order.

    stage_order(["reading", "tests"])   # ["tests", "reading"]
    stage_order(["linting"])            # StageError: 'linting': not a stage (the stages: tests, ...)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from memdoor.core.errors import ReviewInputError

Stage = Literal["tests", "differential", "reading"]
STAGES: tuple[Stage, ...] = ("tests", "differential", "reading")
_SHOWN = 40
"""Characters of an unknown name an error repeats (the name is the caller's text)."""


class StageError(ReviewInputError):
    """A list of stages that cannot be run: an unknown name, or none."""


def stage_order(names: Iterable[str]) -> list[Stage]:
    """``names`` as the stages to run, in the pipeline's order; StageError (one line) for an unknown name
    or an empty list."""
    given = list(names)
    unknown = [n for n in given if n not in STAGES]
    known = f"(the stages: {', '.join(STAGES)})"
    if unknown:
        shown = ", ".join(repr(n[:_SHOWN]) for n in unknown[:3]) + (", …" if len(unknown) > 3 else "")
        raise StageError(f"{shown}: not a stage {known}")
    if not given:
        raise StageError(f"no stage named {known}")
    return [s for s in STAGES if s in given]


def _checked(value: object) -> object:
    """A list of names in the pipeline's order; anything but a list of strings is left to pydantic's
    own type check (its error names the item)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return value
    try:
        return stage_order(value)
    except StageError as e:  # the message as it is (a template would read braces in the name)
        raise PydanticCustomError("stages", "{reason}", {"reason": str(e)}) from None


Stages = Annotated[list[Stage], BeforeValidator(_checked)]
"""A pydantic field of stages, checked by :func:`stage_order` (the same error text as ``--stages``)."""
