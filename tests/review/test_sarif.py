"""SARIF 2.1.0: the structure code-scanning tools read, checked field by field."""

from __future__ import annotations

import json

from review_helpers import report

from memdoor.review.sarif import to_sarif


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
    assert res["message"]["text"] == "divides by len - 1"
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
