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
