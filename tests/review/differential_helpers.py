"""A differential-only review of one change to a real repository, with one scripted agent."""

from __future__ import annotations

import multiprocessing
import queue
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from review_helpers import diff_of, git

from memdoor.memory.inproc import InProcMemory
from memdoor.models.pool import ModelPool
from memdoor.models.scripted import ScriptedModel
from memdoor.review.session import ReviewConfig, ReviewReport, prepare, run_review
from memdoor.run.env import RunEnv

REFACTOR = "refactor, no behaviour change"


def commit(root: Path, path: str, text: str) -> None:
    """Add ``path`` with ``text`` to the repository in a commit of its own."""
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)
    git(root, "add", path)
    git(root, "commit", "-qm", f"add {path}")


async def review_change(
    sandbox, root: Path, path: str, new_text: str, tmp_path: Path, respond: Callable[[list], str],
    description: str = REFACTOR,
) -> tuple[ReviewReport, ModelPool]:  # fmt: skip
    """The review (differential stage only) of changing ``path`` to ``new_text``, in a fresh folder under
    ``tmp_path``; its agent answers with ``respond(messages)``."""
    return await review_diff(sandbox, root, diff_of(root, path, new_text), tmp_path, respond, description)


async def review_diff(
    sandbox,
    root: Path,
    diff: str,
    tmp_path: Path,
    respond: Callable[[list], str],
    description: str = REFACTOR,
) -> tuple[ReviewReport, ModelPool]:
    """The review (differential stage only) of ``diff`` to the repository at ``root``, as
    :func:`review_change` makes it."""
    workdir = Path(tempfile.mkdtemp(prefix="work-", dir=tmp_path))
    pool = ModelPool()
    pool.add("scripted:0", ScriptedModel(respond=respond, spec="scripted:0"))
    env = RunEnv(pool=pool, sandbox=sandbox, memory=InProcMemory(), trace_dir=tmp_path / "traces")
    cfg = ReviewConfig(agents=1, models=["scripted:0"], description=description, stages=["differential"])
    report = await run_review(prepare(diff, root, cfg, workdir), cfg, env)
    assert report.error is None, report.error
    return report, pool


def finishes(call: Callable[[], Any], seconds: float = 20.0) -> Any:
    """What ``call`` returns; it runs in a child process (a regular expression holds the interpreter's lock,
    so a thread could not be waited for), and one still running after ``seconds`` — a search whose time
    grows with the square of the text or worse — is stopped and fails the test instead of hanging it."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=lambda: results.put(call()), daemon=True)
    child.start()
    try:
        return results.get(timeout=seconds)
    except queue.Empty:
        raise AssertionError(f"still running after {seconds:g} s") from None
    finally:
        child.kill()
        child.join()


def only_difference(ran) -> tuple[str, str]:
    """The base's and the change's outcome, as shown, of a target's one reproduced difference."""
    assert ran.reproduced == 1, ran
    (d,) = ran.differences
    return d.old.show(), d.new.show()


async def rust_library_difference(sandbox, tmp_path: Path, old: str, new: str) -> tuple[str, str]:
    """:func:`only_difference` of the one function changed from ``old`` to ``new`` (a crate's ``src/lib.rs``),
    called with 1 (the input then made smaller by the stage)."""
    from memdoor.judging.judge import Judge
    from memdoor.review.differential.execute import differences
    from memdoor.review.differential.inputs import Call
    from memdoor.review.differential.plan import rust_batches
    from memdoor.review.differential.rustfunctions import compare_rust

    base, changed = tmp_path / "base", tmp_path / "changed"
    for root, text in ((base, old), (changed, new)):
        (root / "src").mkdir(parents=True)
        (root / "src/lib.rs").write_text(text)
    (fn,), _ = compare_rust(old, new, file="src/lib.rs")
    (batch,) = rust_batches([(0, fn, [Call(text="[1]")])], changed, base)
    (ran,) = await differences(Judge(sandbox), batch)
    return only_difference(ran)


async def js_function_difference(sandbox, old: str, new: str, name: str = "addOne") -> tuple[str, str]:
    """:func:`only_difference` of the function ``name`` changed from ``old`` to ``new`` (``lib/calc.js``),
    called with 1 (the input then made smaller by the stage)."""
    from memdoor.judging.judge import Judge
    from memdoor.review.differential.execute import differences
    from memdoor.review.differential.inputs import Call
    from memdoor.review.differential.jsfunctions import compare_javascript
    from memdoor.review.differential.node import js_call_request, js_program, read_js
    from memdoor.review.differential.targets import Batch

    (fn,) = [t for t in compare_javascript(old, new, file="lib/calc.js")[0] if t.name == name]
    work = [(0, fn, [Call(text="[1]")])]
    old_code, new_code = js_program({"lib/calc.js": old}), js_program({"lib/calc.js": new})
    batch = Batch(
        "javascript", old_code, new_code, work, lambda t, c, _k: js_call_request(t.file, t.name, c), read_js
    )
    (ran,) = await differences(Judge(sandbox), batch)
    return only_difference(ran)
