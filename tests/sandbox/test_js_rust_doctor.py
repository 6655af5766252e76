"""``memdoor doctor`` says which languages can run here; the tool lookups say why one cannot."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from memdoor.cli import main
from memdoor.sandbox.lang import javascript
from memdoor.sandbox.lang.run import tool_for
from memdoor.sandbox.lang.toolchain import find_node, find_rust


@pytest.mark.skipif(
    not (tool_for("javascript").usable and tool_for("rust").usable),
    reason="node or the sandbox's Rust toolchain (scripts/install_rust.sh) is missing",
)
def test_doctor_lists_the_languages_that_run_here(capsys):
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    languages = {x["language"]: x for x in report["languages"]}
    assert set(languages) == {"python", "javascript", "rust"}
    assert all(x["status"] == "ok" for x in languages.values()), languages
    assert languages["javascript"]["version"].startswith("v")
    assert languages["rust"]["version"].startswith("rustc ")
    assert report["isolation"] in languages["rust"]["detail"]
    assert main(["doctor"]) == 0
    text = capsys.readouterr().out
    assert "languages:" in text and "javascript" in text and "rust" in text


def test_a_missing_rust_toolchain_says_what_to_do(tmp_path):
    if Path("/usr/bin/rustc").exists():
        pytest.skip("the system's rustc is the fallback here")
    tool = find_rust(tmp_path)
    assert not tool.usable and "install_rust.sh" in tool.problem


def test_missing_prebuilt_crates_are_named(tmp_path):
    real = find_rust()
    if not real.usable:
        pytest.skip("no sandbox Rust toolchain here")
    (tmp_path / "toolchain").symlink_to(Path(real.path).parent.parent)
    (tmp_path / "deps").mkdir()
    tool = find_rust(tmp_path)
    assert not tool.usable and "rand" in tool.problem


def test_a_node_outside_usr_is_bound_read_only_and_runs(sandbox):
    system = find_node()
    if not system.usable:
        pytest.skip("node is not usable here")
    root = Path(tempfile.mkdtemp(prefix="memdoor-node-", dir="/opt" if os.access("/opt", os.W_OK) else None))
    try:
        root.chmod(0o755)
        (root / "bin").mkdir(mode=0o755)
        try:
            os.link(system.path, root / "bin" / "node")
        except OSError:
            shutil.copy2(system.path, root / "bin" / "node")
        tool = find_node(str(root / "bin"))
        if not tool.usable:
            pytest.skip(f"a node outside /usr cannot be made usable here: {tool.problem}")
        assert tool.path == str(root / "bin" / "node") and tool.ro_paths == (str(root),)
        result = javascript.run_check(sandbox, tool, "const f = (a) => a + 1;", "console.assert(f(1) === 2)")
        assert result.status == "passed", result
        failing = javascript.run_check(sandbox, tool, "const f = (a) => a;", "console.assert(f(1) === 2)")
        assert failing.status == "wrong_answer"
    finally:
        shutil.rmtree(root, ignore_errors=True)
