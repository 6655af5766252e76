"""Which languages can run here: each tool found (path, version) and a trivial program of each run in the
sandbox (the same isolation as Python's), for ``memdoor doctor``."""

from __future__ import annotations

import subprocess
from typing import Literal

from pydantic import BaseModel, Field

from memdoor.core.errors import MemdoorError
from memdoor.core.problem import TestCase
from memdoor.sandbox.lang.process import Isolation
from memdoor.sandbox.lang.run import LANGUAGES, run_program, tool_for

_HELLO = {
    "javascript": "console.log(6 * 7);",
    "rust": 'fn main() { println!("{}", 6 * 7); }',
}


class LanguageStatus(BaseModel):
    """One language as this machine runs it."""

    language: str = Field(description="python, javascript or rust.")
    status: Literal["ok", "unavailable", "fail"] = Field(
        description="ok: a program ran in the sandbox; unavailable: no usable tool here; fail: the tool is "
        "there but the program did not run."
    )
    tool: str = Field(default="", description="The interpreter or compiler the sandbox runs.")
    version: str = Field(default="", description="Its version.")
    detail: str = Field(default="", description="How it ran (isolation), or why not.")


def _python(sb: Isolation) -> LanguageStatus:
    python = sb.config.python
    try:
        done = subprocess.run([python, "--version"], capture_output=True, text=True, timeout=30)
        version = (done.stdout or done.stderr).strip()
    except (OSError, subprocess.SubprocessError):
        version = ""
    return LanguageStatus(
        language="python", status="ok", tool=python, version=version, detail=f"harness in {sb.name}"
    )


def check_language(sb: Isolation, language: str) -> LanguageStatus:
    tool = tool_for(language)
    if not tool.usable:
        return LanguageStatus(language=language, status="unavailable", tool=tool.path, detail=tool.problem)
    base = {"language": language, "tool": tool.path, "version": tool.version}
    try:
        v = run_program(sb, language, _HELLO[language], [TestCase(kind="stdin", input="\n", output="42")])
    except MemdoorError as e:
        return LanguageStatus(**base, status="fail", detail=str(e))
    if not v.passed:
        detail = v.tests[0].detail if v.tests else ""
        return LanguageStatus(**base, status="fail", detail=f"a trivial program: {v.status} {detail}"[:300])
    where = f"runs in {sb.name}" + (f"; read-only: {', '.join(tool.ro_paths)}" if tool.ro_paths else "")
    return LanguageStatus(**base, status="ok", detail=where)


def check_languages(sb: Isolation) -> list[LanguageStatus]:
    return [_python(sb), *(check_language(sb, language) for language in LANGUAGES)]
