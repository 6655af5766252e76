"""A row's revision (strategy code, shared code, selector, prompts): recorded when a run starts, checked on
resume like its settings; a pure refactor leaves it alone; and the guard that makes a developer bump a
revision number when the code it stands for changes (real store, real CLI, scripted model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_helpers import run_cli

from memdoor.bench.config import BenchConfig, parse_rows
from memdoor.bench.records import ProblemInfo, ResultRecord, RunRecord
from memdoor.bench.revision import (
    COMMON_REVISION,
    SELECTOR_REVISIONS,
    STRATEGY_REVISIONS,
    common_modules,
    digest,
    fingerprint,
    normalised,
    row_revision,
    selector_modules,
    strategy_modules,
    strategy_prompts,
)
from memdoor.bench.store import DB_NAME, ResultsStore
from memdoor.core.errors import ResultsStoreError
from memdoor.core.registry import REGISTRY

FINGERPRINTS = Path(__file__).with_name("revision_fingerprints.json")
PROBLEMS = [ProblemInfo(id=f"p{i}", position=i) for i in range(2)]


def current() -> dict[str, dict]:
    """Each revision number with the fingerprint of the code it stands for, as the committed file holds."""
    entries = {
        f"strategy:{n}": (STRATEGY_REVISIONS.get(n), fingerprint(strategy_modules(n)))
        for n in REGISTRY["strategy"]
    }
    entries["strategies"] = (COMMON_REVISION, fingerprint(common_modules()))
    for n in REGISTRY["selector"]:
        entries[f"selector:{n}"] = (SELECTOR_REVISIONS.get(n), fingerprint(selector_modules(n)))
    return {k: {"revision": r, "fingerprint": f} for k, (r, f) in sorted(entries.items())}


def stale(recorded: dict[str, dict], now: dict[str, dict]) -> list[str]:
    """What the guard complains about: code changed under an unchanged number, a number changed without
    its fingerprint recorded, an entry missing from either side."""
    out = []
    for key in sorted(set(recorded) | set(now)):
        old, new = recorded.get(key), now.get(key)
        if old is None or new is None or new["revision"] is None:
            out.append(f"{key}: no revision number or no recorded entry")
        elif old["fingerprint"] != new["fingerprint"] and old["revision"] == new["revision"]:
            out.append(f"{key}: its code changed but its revision is still {new['revision']}")
        elif old != new:
            out.append(f"{key}: revision {new['revision']} is not recorded with its fingerprint")
    return out


def test_every_revision_number_is_recorded_with_the_code_it_stands_for():
    """Failing here? If the change alters behaviour, bump the number in memdoor/bench/revision.py; if it
    is a pure refactor, keep the number. Either way, put the entries printed below into
    tests/bench/revision_fingerprints.json."""
    now = current()
    problems = stale(json.loads(FINGERPRINTS.read_text()), now)
    assert not problems, "; ".join(problems) + "\nrecord:\n" + json.dumps(now, indent=1, sort_keys=True)


def test_the_guard_catches_changed_code_under_an_unchanged_number():
    rec = {"strategy:x": {"revision": 1, "fingerprint": "a"}}
    assert stale(rec, rec) == []
    assert "its code changed" in stale(rec, {"strategy:x": {"revision": 1, "fingerprint": "b"}})[0]
    assert "not recorded" in stale(rec, {"strategy:x": {"revision": 2, "fingerprint": "b"}})[0]
    assert stale(rec, {**rec, "strategy:y": {"revision": None, "fingerprint": "c"}})


def test_a_refactor_keeps_the_fingerprint_and_a_change_of_behaviour_does_not():
    code = 'from a import b\n\n\ndef f(x):\n    """Doc."""\n    return b(x) + 1  # one\n'
    moved = "import os\nfrom c.d import b\ndef f(x):\n    # reformatted, other docstring\n    '''Other.'''\n    return (b(x)\n            + 1)\n"
    assert normalised(code) == normalised(moved)
    assert normalised(code) != normalised(code.replace("+ 1", "+ 2"))
    assert digest(["a", "b"]) == digest(["b", "a"]) != digest(["a", "b "])  # a template's bytes count


def test_the_prompt_digest_covers_the_templates_the_strategies_render():
    names = strategy_prompts()
    assert {"answer", "repair", "repair_explain", "repair_fix", "system", "refine"} <= set(names)
    assert "code_review" not in names  # the review's prompts are not a strategy's
    revision = row_revision("hybrid", "vote")
    assert revision["strategy"] == f"hybrid {STRATEGY_REVISIONS['hybrid']}"
    assert set(revision) == {"strategy", "strategies", "selector", "prompts"}


def test_the_shared_fingerprint_covers_the_agents_and_the_language_wording_not_the_calibration():
    """The team's agents (Agent.ask, seeds and prompt variants, CallContext) and the JavaScript/Rust prompt
    wording (Python, so no template the prompt digest sees) decide every strategy's behaviour; the
    calibration only estimates and decides no selector's choice."""
    common = set(common_modules())
    assert {"memdoor.agents", "memdoor.agents.team", "memdoor.agents.calls"} <= common
    assert "memdoor.prompts.languages" in common and "memdoor.strategies.base" in common
    assert "memdoor.select.vote" in selector_modules("vote")
    assert "memdoor.select.calibration" not in selector_modules("vote")


def run_with(revision: dict[str, str] | None) -> RunRecord:
    rows = [
        r.model_copy(update={"revision": revision or {}})
        for r in parse_rows("single,parallel:2", ["scripted:x.json"], [])
    ]
    config = BenchConfig(suite="s.jsonl", rows=rows)
    return RunRecord(config=config, problems_sha256="x", problem_count=len(PROBLEMS))


def record(store: ResultsStore, row: str, pid: str = "p0") -> None:
    store.record(ResultRecord(problem_id=pid, row=row, status="done", passed=True, code=f"# {pid} {row}"))


OLD = {"strategy": "single 1", "strategies": "1", "selector": "vote 1", "prompts": "aaaa"}
NEW = {**OLD, "prompts": "bbbb"}


def test_a_changed_revision_is_refused_on_one_line_unless_accepted_or_redone(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_with(OLD), PROBLEMS) as store:
        record(store, "single")
        record(store, "parallel:2")
    before = (tmp_path / "run.json").read_bytes()
    with pytest.raises(ResultsStoreError) as e:
        ResultsStore.create_or_resume(tmp_path, run_with(NEW), PROBLEMS)
    message = str(e.value)
    assert "\n" not in message and "row single" in message and "prompts: 'aaaa' → 'bbbb'" in message
    assert "--accept-revision single" in message and "--redo single" in message
    assert (tmp_path / "run.json").read_bytes() == before  # nothing changed by a refusal
    with ResultsStore.create_or_resume(
        tmp_path, run_with(NEW), PROBLEMS, accept=["single", "parallel:2"]
    ) as store:
        assert {r.name: r.revision for r in store.rows()} == {"single": NEW, "parallel:2": NEW}
        assert len(store.statuses()) == 2  # accepted knowingly: the results stay
    doc = json.loads((tmp_path / "run.json").read_text())
    assert all(r["revision"] == NEW for r in doc["config"]["rows"])
    with ResultsStore.create_or_resume(
        tmp_path, run_with(OLD), PROBLEMS, redo=["single", "parallel:2"]
    ) as store:
        assert store.dropped == 2 and store.rows()[0].revision == OLD


def test_a_run_stored_before_revisions_resumes_and_records_them_from_then_on(tmp_path):
    with ResultsStore.create_or_resume(tmp_path, run_with(None), PROBLEMS) as store:
        record(store, "single")
    assert "revision" not in (tmp_path / "run.json").read_text()  # an old run.json stays as it was
    with ResultsStore.create_or_resume(tmp_path, run_with(OLD), PROBLEMS) as store:
        assert store.rows()[0].revision == OLD and len(store.statuses()) == 1
    with pytest.raises(ResultsStoreError, match="--accept-revision single"):
        ResultsStore.create_or_resume(tmp_path, run_with(NEW), PROBLEMS)


def test_the_bench_command_refuses_a_changed_revision_and_accepts_it_when_asked(
    tmp_path, problem_file, answers
):
    out = tmp_path / "out"
    cmd = ["bench", problem_file, "--model", f"scripted:{answers}", "--strategies", "single", "--limit", "1"]
    done = run_cli(*cmd, "--out", out)
    assert done.returncode == 0, done.stderr
    stored = json.loads((out / "run.json").read_text())["config"]["rows"][0]["revision"]
    assert stored == row_revision("single", "vote")
    # the portable files of a run made when the prompts were other (the database is rebuilt from them)
    doc = json.loads((out / "run.json").read_text())
    doc["config"]["rows"][0]["revision"]["prompts"] = "0000"
    (out / "run.json").write_text(json.dumps(doc))
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
        (out / name).unlink(missing_ok=True)
    refused = run_cli(*cmd, "--out", out)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "row single" in refused.stderr
    assert "prompts: '0000' →" in refused.stderr
    bad = run_cli(*cmd, "--out", out, "--accept-revision", "nope")
    assert bad.returncode == 2 and "--accept-revision nope: not a row of this command" in bad.stderr
    accepted = run_cli(*cmd, "--out", out, "--accept-revision", "single")
    assert accepted.returncode == 0, accepted.stderr
    assert "1 already stored" in accepted.stdout
    assert json.loads((out / "run.json").read_text())["config"]["rows"][0]["revision"] == stored
