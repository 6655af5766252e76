"""SARIF 2.1.0: the structure code-scanning tools read, checked field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from review_helpers import CALC, report

from memdoor.review.consensus import Group
from memdoor.review.findings import Counterexample
from memdoor.review.sarif import FINGERPRINT, fingerprint, to_sarif
from memdoor.review.teststage import regression


def test_sarif_structure():
    doc = json.loads(json.dumps(to_sarif(report())))
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-2.1.0.json")
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "memdoor" and driver["version"]
    rule_ids = [r["id"] for r in driver["rules"]]
    assert rule_ids == ["memdoor/bug", "memdoor/security", "memdoor/performance", "memdoor/style"]
    assert all(r["shortDescription"]["text"] for r in driver["rules"])
    (res,) = run["results"]  # consensus findings only
    assert res["ruleId"] == "memdoor/bug" and rule_ids[res["ruleIndex"]] == res["ruleId"]
    assert res["level"] in {"none", "note", "warning", "error"} and res["level"] == "error"
    assert res["message"]["text"] == "[unverified] divides by len - 1"
    assert res["properties"]["verified"] is False and res["properties"]["counterexample"] is None
    (loc,) = res["locations"]
    phys = loc["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == "calc.py"
    assert phys["region"]["startLine"] == 6 and phys["region"]["endLine"] == 6
    assert res["properties"]["agents"] == ["agent0", "agent1"]
    (fix,) = res["fixes"]
    (rep,) = fix["artifactChanges"][0]["replacements"]
    assert rep["deletedRegion"]["startLine"] == 6 and rep["insertedContent"]["text"].endswith("\n")
    assert run["properties"]["minority"] == 1


def test_levels_follow_severity():
    r = report()
    for severity, level in [("critical", "error"), ("medium", "warning"), ("low", "note"), ("info", "note")]:
        r.findings[0].severity = severity
        assert to_sarif(r)["runs"][0]["results"][0]["level"] == level
    r.findings = []
    assert to_sarif(r)["runs"][0]["results"] == []


def _tree(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(text)
    return root


def _read(line: int, **kw) -> Group:
    base = dict(file="calc.py", line=line, end_line=line, severity="high", kind="bug",
                message="divides by len - 1", agents=["agent0", "agent1"])  # fmt: skip
    return Group(**{**base, **kw})


def test_a_fingerprint_survives_lines_inserted_above(tmp_path):
    """GitHub code scanning keeps one alert per partialFingerprints value: lines inserted above the
    problem (a later push) keep it; another problem (other lines, another kind) gets another."""
    before = _tree(tmp_path / "a", CALC)
    after = _tree(tmp_path / "b", "import math\n\n\n" + CALC.replace("    total = 0", "    total  =  0"))
    same = fingerprint(_read(3, message="starts at zero"), before)
    assert fingerprint(_read(6, message="starts at zero, says another run"), after) == same  # 3 lines down
    assert fingerprint(_read(3, kind="style"), before) != same
    assert fingerprint(_read(6), before) != same
    doc = to_sarif(report(findings=[_read(3)]), before)
    assert doc["runs"][0]["results"][0]["partialFingerprints"] == {FINGERPRINT: same}
    assert all(c in "0123456789abcdef" for c in same) and len(same) == 64


def test_an_execution_finding_is_fingerprinted_by_its_test_or_function_not_its_place(tmp_path):
    tree = _tree(tmp_path / "a", CALC)
    first = regression("test_calc.T.test_mean", "3.0 != 2", [])
    moved = first.model_copy(update={"line": 40, "end_line": 44})
    other = regression("test_calc.T.test_other", "3.0 != 2", [])
    assert first.verified and fingerprint(first, tree) == fingerprint(moved, tree) != fingerprint(other, tree)
    assert (first.source, first.test) == ("tests", "test_calc.T.test_mean")  # the builder says, not the text
    reworded = first.model_copy(update={"message": "test_calc.T.test_mean broke (said another way)"})
    assert fingerprint(reworded, tree) == fingerprint(first, tree)
    elsewhere = first.model_copy(update={"file": "README.md"})  # a next push edits a file sorting first
    assert fingerprint(elsewhere, tree) == fingerprint(first, tree)
    example = Counterexample(function="mean", input="[1, 2]", old="1.5", new="3.0")
    shown = _read(6, agents=[], verified=True, counterexample=example, source="differential")
    assert fingerprint(shown, tree) == fingerprint(shown.model_copy(update={"line": 9}), tree)
    assert fingerprint(shown, tree) != fingerprint(
        shown.model_copy(update={"counterexample": example.model_copy(update={"function": "median"})}), tree
    )


def test_verified_results_say_so_with_their_counterexample():
    example = Counterexample(function="mean", input="[1, 2]", old="1.5", new="3.0")
    g = _read(6, agents=[], verified=True, counterexample=example)
    (res,) = to_sarif(report(findings=[g]))["runs"][0]["results"]
    assert res["message"]["text"].startswith("[verified] divides by len - 1")
    assert "Call: mean([1, 2])" in res["message"]["text"] and "Change: 3.0" in res["message"]["text"]
    assert res["properties"]["verified"] is True and res["properties"]["counterexample"]["old"] == "1.5"


# The SARIF object model's class of each object-valued property memdoor writes (sarif-om, when installed).
_CLASSES = {
    "runs": "Run", "tool": "Tool", "driver": "ToolComponent", "rules": "ReportingDescriptor",
    "shortDescription": "MultiformatMessageString", "defaultConfiguration": "ReportingConfiguration",
    "invocations": "Invocation", "toolExecutionNotifications": "Notification", "message": "Message",
    "results": "Result", "locations": "Location", "physicalLocation": "PhysicalLocation",
    "artifactLocation": "ArtifactLocation", "region": "Region", "deletedRegion": "Region", "fixes": "Fix",
    "description": "Message", "artifactChanges": "ArtifactChange", "replacements": "Replacement",
    "insertedContent": "ArtifactContent",
}  # fmt: skip


def _build(om, cls_name: str, data: dict, where: str):
    """``data`` as sarif-om's ``cls_name``: every property must be one the schema has there, every
    required one present (attrs raises otherwise)."""
    import attr

    cls = getattr(om, cls_name)
    names = {f.metadata["schema_property_name"]: f.name for f in attr.fields(cls)}
    kwargs = {}
    for key, value in data.items():
        assert key in names, f"{where}: {cls_name} has no property {key!r}"
        if key in ("properties", "partialFingerprints"):
            assert isinstance(value, dict)
            kwargs[names[key]] = value
        elif key in _CLASSES and isinstance(value, list):
            kwargs[names[key]] = [_build(om, _CLASSES[key], v, f"{where}.{key}") for v in value]
        elif key in _CLASSES:
            kwargs[names[key]] = _build(om, _CLASSES[key], value, f"{where}.{key}")
        else:
            assert isinstance(value, (str, int, float, bool, type(None), list)), f"{where}.{key}"
            kwargs[names[key]] = value
    return cls(**kwargs)


def test_the_sarif_fits_the_sarif_object_model(tmp_path):
    om = pytest.importorskip("sarif_om")
    example = Counterexample(function="mean", input="[1, 2]", old="1.5", new="3.0")
    r = report(findings=[*report().findings, _read(6, agents=[], verified=True, counterexample=example)])
    r.incomplete("no sandbox")
    doc = json.loads(json.dumps(to_sarif(r, _tree(tmp_path / "a", CALC))))
    log = _build(om, "SarifLog", doc, "sarif")
    assert log.version == "2.1.0" and len(log.runs[0].results) == 2
    assert log.runs[0].results[1].partial_fingerprints[FINGERPRINT]


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("src/a b#1%zz?.py", "src/a%20b%231%25zz%3F.py"),  # '#' would start a fragment, '%zz' is no escape
        ("t\u00e9st.py", "t%C3%A9st.py"),
        ("c:d.py", "c%3Ad.py"),  # a colon in the first segment would read as a scheme
        ("b\udcff.py", "b%FF.py"),  # a name that is not UTF-8, by its byte
    ],
)
def test_artifact_uris_are_percent_encoded(path, uri):
    (res,) = to_sarif(report(findings=[_read(6, file=path, suggestion="x")]))["runs"][0]["results"]
    location = res["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": uri, "uriBaseId": "%SRCROOT%"}
    assert res["fixes"][0]["artifactChanges"][0]["artifactLocation"] == location


def _differs(old: str, new: str, **kw) -> Group:
    example = Counterexample(function="mean", input=kw.pop("input", "[1, 2]"), old=old, new=new)
    return _read(
        kw.pop("line", 6), agents=[], verified=True, counterexample=example, source="differential", **kw
    )


def _fingerprints(groups: list[Group], source: Path | None = None) -> list[str]:
    doc = to_sarif(report(findings=groups), source)
    return [r["partialFingerprints"][FINGERPRINT] for r in doc["runs"][0]["results"]]


def test_differences_of_one_function_of_other_kinds_are_other_alerts():
    """The differential stage keeps up to three differences of one function, one per kind of outcome:
    each is its own alert, and each keeps it on the next push whatever the values its input shows."""
    kinds = [
        _differs("returns 1.5", "returns 3.0"),
        _differs("returns 1.5", "raises ZeroDivisionError: division by zero"),
        _differs("raises TypeError: bad operand", "returns ''"),
    ]
    prints = _fingerprints(kinds)
    assert len(set(prints)) == 3 and prints == [fingerprint(g) for g in kinds]
    later = _differs("returns 2.0", "returns 4.0", input="[2, 3]", line=9)  # the next push's smallest input
    assert fingerprint(later) == prints[0]
    other_error = _differs("returns 1.5", "raises ValueError: empty")
    assert fingerprint(other_error) not in prints


def test_results_of_one_run_never_share_a_fingerprint(tmp_path):
    """Reading findings on lines that cannot be read (past the end, a file not in the tree) have no
    line text to tell them apart, nor have two differences of the same kind: the repeats are hashed
    with their occurrence, the first keeps its fingerprint, and the run's order makes it stable."""
    tree = _tree(tmp_path / "a", CALC)
    unread = [_read(40, message="one"), _read(80, message="another"), _read(3, file="gone.py")]
    unread.append(_read(5, file="gone.py", message="a third"))
    twice = [_differs("returns 1.5", "returns 3.0"), _differs("returns 2", "returns 5", input="[]")]
    prints = _fingerprints([*unread, *twice], tree)
    assert len(set(prints)) == len(prints) == 6
    assert prints[0] == fingerprint(unread[0], tree) and prints[4] == fingerprint(twice[0], tree)
    assert _fingerprints([*unread, *twice], tree) == prints  # the same report: the same fingerprints


def test_a_long_output_never_cuts_how_a_program_ended_off_its_fingerprint():
    """A program's output of unprintable characters shows up to ten times its length: cut before the
    counterexample's own limit, so its exit status (what the alert is about) is still read."""
    from memdoor.review.differential.driver import MAX_SHOWN_OUTPUT, CallOutcome
    from memdoor.review.findings import MAX_EXAMPLE_TEXT

    def ended(text: str, status: int) -> str:
        shown = CallOutcome(kind="exit", type=f"exit status {status}", text=text).show()
        assert len(shown) < MAX_EXAMPLE_TEXT
        return shown

    for text in ("\x00" * 601, "\U000e0001" * 601, "\t" * 601):
        one, other = ended(text, 1), ended(text[:-1] + "x", 1)
        assert one.startswith("prints ") and one.endswith("… and exits with status 1")
        assert len(one) <= len("prints ") + MAX_SHOWN_OUTPUT + len(" and exits with status 1")
        assert fingerprint(_differs("returns 1", one)) == fingerprint(_differs("returns 1", other))
        assert fingerprint(_differs("returns 1", one)) != fingerprint(_differs("returns 1", ended(text, 2)))
    assert ended("ok\n", 0) == "prints 'ok\\n' and exits with status 0"


def test_shown_output_ends_within_its_limit_for_any_text():
    from memdoor.review.differential.driver import shown_output

    for limit in (1, 2, 3, 5, 40):
        for text in ("", "a", "'\"", "\x00" * 50, "\U000e0001" * 9, "x" * 100):
            shown = shown_output(text, limit)
            assert len(shown) <= max(limit, 3), (limit, text, shown)
            assert shown == repr(text) or shown.endswith("…")
