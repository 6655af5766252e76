"""Per-test results read from a test command's output: pytest, Node's test runner and ``cargo test``.

- **pytest**: the short summary's ``FAILED path::name - message`` and ``ERROR path::name`` lines (shown
  by default, ``-q`` included), the failure text from the ``____ name ____`` section above them;
- **Node's test runner** (``node --test``): TAP's ``not ok N - name`` (the default when the output is
  not a terminal), or the spec reporter's ``✖ name (1.2ms)``;
- **unittest**: the ``FAIL: name (module.Class.name)`` and ``ERROR: …`` sections;
- **cargo test** (libtest): ``test path::name ... FAILED`` and the ``---- path::name stdout ----``
  section.

Another runner gives no per-test result (``runner`` None): the review then compares exit statuses only.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

MAX_TEXT = 1500
"""Characters of failure text kept per test."""

_PYTEST_SUMMARY = re.compile(r"^(FAILED|ERROR) ([^\s(]\S*?(?:::\S+|\.py))(?: - (.*))?$", re.MULTILINE)
_PYTEST_SECTION = re.compile(r"^_{3,} (?:ERROR at \w+ of )?(\S.*?) _{3,}$", re.MULTILINE)
_PYTEST_END = re.compile(r"^={3,}", re.MULTILINE)
_PYTEST_RAN = re.compile(r"^(?:=+ )?.*\b\d+ (?:passed|failed|error|errors)\b.*\bin [\d.]+s\b", re.MULTILINE)
_TAP_NOT_OK = re.compile(r"^(\s*)not ok \d+ - (.+?)(?:\s+#\s.*)?$", re.MULTILINE)
_TAP_ANY = re.compile(r"^\s*(?:not )?ok \d+ - ", re.MULTILINE)
_SPEC_FAIL = re.compile(r"^\s*✖ (.+?) \([\d.]+m?s\)\s*$", re.MULTILINE)
_SPEC_ANY = re.compile(r"^\s*[✔✖] .+ \([\d.]+m?s\)\s*$", re.MULTILINE)
_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (\S+) \((\S+?)\)[^\n]*\n-{20,}\n", re.MULTILINE)
_UNITTEST_RAN = re.compile(r"^Ran \d+ tests? in ", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(?:={20,}|-{20,}\nRan )", re.MULTILINE)
_CARGO = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", re.MULTILINE)
_CARGO_SECTION = re.compile(r"^---- (\S+) stdout ----$", re.MULTILINE)


class TestFailure(BaseModel):
    """One test that failed, and why."""

    __test__ = False

    name: str = Field(description="As the runner names it: path::name (pytest, cargo) or the test's title.")
    text: str = Field(default="", description="The failure's text (message, then the runner's section).")


class TestResults(BaseModel):
    """What a run's output says test by test."""

    __test__ = False

    runner: str | None = Field(default=None, description="pytest, node, cargo, or None (unknown).")
    failed: list[TestFailure] = Field(default_factory=list)

    def names(self) -> set[str]:
        return {f.name for f in self.failed}


def _cut(text: str) -> str:
    text = text.strip("\n")
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n…"


def _sections(output: str, header: re.Pattern[str], end: re.Pattern[str] | None = None) -> dict[str, str]:
    """Each section's text by its header's name (up to the next header, or ``end``)."""
    heads = list(header.finditer(output))
    out: dict[str, str] = {}
    for i, m in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(output)
        if end is not None:
            e = end.search(output, m.end(), stop)
            stop = e.start() if e else stop
        out.setdefault(m.group(1), output[m.end() : stop])
    return out


def _pytest(output: str) -> TestResults | None:
    summary = list(_PYTEST_SUMMARY.finditer(output))
    if not summary and not _PYTEST_RAN.search(output):
        return None
    sections = _sections(output, _PYTEST_SECTION, _PYTEST_END)
    failed, seen = [], set()
    for m in summary:
        name = m.group(2)
        if name in seen:
            continue
        seen.add(name)
        short = name.split("::")[-1]
        body = sections.get(short) or sections.get(name.split("::", 1)[-1].replace("::", ".")) or ""
        failed.append(TestFailure(name=name, text=_cut("\n".join(x for x in (m.group(3) or "", body) if x))))
    return TestResults(runner="pytest", failed=failed)


def _tap_block(output: str, start: int, indent: str) -> str:
    """The YAML block under a TAP ``not ok`` line (lines indented deeper than it)."""
    lines = []
    for line in output[start:].splitlines()[1:]:
        if line.strip() and not line.startswith(indent + " "):
            break
        lines.append(line)
    return "\n".join(lines)


def _node(output: str) -> TestResults | None:
    if _TAP_ANY.search(output):
        failed, seen = [], set()
        for m in _TAP_NOT_OK.finditer(output):
            name = m.group(2).strip()
            if name in seen:
                continue
            seen.add(name)
            failed.append(TestFailure(name=name, text=_cut(_tap_block(output, m.start(), m.group(1)))))
        return TestResults(runner="node", failed=failed)
    if _SPEC_ANY.search(output):
        names = list(dict.fromkeys(m.group(1).strip() for m in _SPEC_FAIL.finditer(output)))
        return TestResults(runner="node", failed=[TestFailure(name=n) for n in names])
    return None


def _cargo(output: str) -> TestResults | None:
    results = list(_CARGO.finditer(output))
    if not results:
        return None
    sections = _sections(output, _CARGO_SECTION, re.compile(r"^(?:----|failures:$)", re.MULTILINE))
    failed = [
        TestFailure(name=m.group(1), text=_cut(sections.get(m.group(1), "")))
        for m in results
        if m.group(2) == "FAILED"
    ]
    return TestResults(runner="cargo", failed=failed)


def _unittest(output: str) -> TestResults | None:
    if not _UNITTEST_RAN.search(output):
        return None
    failed, seen = [], set()
    for m in _UNITTEST.finditer(output):
        name = m.group(2)
        if name in seen:
            continue
        seen.add(name)
        end = _UNITTEST_END.search(output, m.end())
        failed.append(
            TestFailure(name=name, text=_cut(output[m.end() : end.start() if end else len(output)]))
        )
    return TestResults(runner="unittest", failed=failed)


def parse_results(output: str) -> TestResults:
    """The per-test results ``output`` shows (cargo, pytest, unittest, Node), or an unknown runner."""
    for reader in (_cargo, _pytest, _unittest, _node):
        found = reader(output)
        if found is not None:
            return found
    return TestResults()
