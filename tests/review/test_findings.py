"""Reading agents' answers: forgiving about the wrapping, strict about the content."""

from __future__ import annotations

import json

from review_helpers import answer, finding

from memdoor.review.findings import parse_review


def read(text: str, files=frozenset({"calc.py"})):
    return parse_review(text, agent="agent0", part="calc.py", files=set(files))


def test_fenced_json_block_and_bare_json_and_bare_list():
    for text in (
        answer(finding()),
        answer(finding(), fence=False),
        json.dumps([finding()]),
        "Thoughts first.\n```\n" + json.dumps({"findings": [finding()]}) + "\n```\nDone.",
    ):
        r = read(text)
        assert r.error is None and len(r.findings) == 1
        f = r.findings[0]
        assert (f.file, f.line, f.end_line, f.severity, f.kind) == ("calc.py", 6, 6, "high", "bug")


def test_the_last_json_block_wins_and_normalisation():
    first = "```json\n" + json.dumps({"findings": []}) + "\n```\n"
    raw = finding(severity=" HIGH ", kind="Security", file="b/calc.py", line=9, end_line=7, confidence=None)
    del raw["confidence"]
    r = read(first + "Corrected:\n" + answer(raw))
    (f,) = r.findings
    assert (f.severity, f.kind, f.file, f.line, f.end_line, f.confidence) == (
        "high",
        "security",
        "calc.py",
        7,
        9,
        None,
    )


def test_path_prefixes_are_dropped():
    for path in ("a/calc.py", "b/calc.py", "./calc.py", " calc.py "):
        assert read(answer(finding(file=path))).findings[0].file == "calc.py"


def test_missing_end_line_and_file_default_to_line_and_part():
    raw = finding()
    del raw["end_line"], raw["file"]
    (f,) = read(answer(raw)).findings
    assert (f.file, f.line, f.end_line) == ("calc.py", 6, 6)


def test_malformed_answer_is_an_error_not_a_crash():
    for text in ("no json here", "```json\n{broken\n```", json.dumps({"verdict": "ok"}), "[" * 5000):
        r = read(text)
        assert r.error and r.findings == []


def test_bad_findings_are_dropped_and_counted_the_good_kept():
    r = read(
        answer(
            finding(),
            finding(severity="catastrophic"),
            finding(kind="naming"),
            finding(line=0),
            finding(message=""),
            finding(confidence=7),
            finding(file="other.py"),
            "not an object",
        )
    )
    assert r.error is None and len(r.findings) == 1
    assert len(r.dropped) == 7
    assert any("severity" in d for d in r.dropped) and any("other.py" in d for d in r.dropped)


def test_an_answer_is_read_up_to_its_length_cap():
    from memdoor.review.findings import MAX_ANSWER_CHARS

    tail = answer(finding())
    assert len(read("x" * (MAX_ANSWER_CHARS - len(tail)) + tail).findings) == 1
    late = read("x" * MAX_ANSWER_CHARS + tail)  # past the cap: never parsed
    assert late.findings == [] and late.unreadable
