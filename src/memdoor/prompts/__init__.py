"""Prompt templates, one file each beside this module, rendered with strict variables.

Templates use :class:`string.Template` syntax (``$name``; ``$$`` for a literal dollar). Rendering
fails with :class:`PromptTemplateError` when a variable is missing *or* unexpected, so a typo in a
template or in the code that fills it cannot silently produce a wrong prompt.
"""

from __future__ import annotations

from importlib import resources
from string import Template


class PromptTemplateError(KeyError):
    """A template asked for a variable that was not given, or was given one it does not use."""


def template(name: str) -> str:
    """The raw text of template ``name`` (``prompts/<name>.txt``)."""
    return (resources.files(__package__) / f"{name}.txt").read_text(encoding="utf-8")


def render(name: str, /, **values: object) -> str:
    """Template ``name`` with ``values`` substituted; every variable must be given, and none extra."""
    tmpl = Template(template(name))
    wanted = set(tmpl.get_identifiers())
    given = set(values)
    if wanted != given:
        missing, extra = sorted(wanted - given), sorted(given - wanted)
        raise PromptTemplateError(f"prompt {name!r}: missing {missing}, unexpected {extra}")
    return tmpl.substitute({k: str(v) for k, v in values.items()})


def lines(name: str) -> list[str]:
    """The non-empty lines of template ``name`` (lists such as the prompt-variant hints)."""
    return [line for line in template(name).splitlines() if line.strip()]
