"""A team reviews a diff: findings ⌈N/2⌉ agents agree on, minority findings ranked, and a patch of the
agreed suggestions offered with the repository's tests run on it in a sandbox.

DIFF is a unified diff file, or - for standard input; it is applied to a copy of the git checkout at
--repo (default: the current one), or taken as already applied when the checkout holds it. Or, with
no DIFF: --base REF reviews `git diff REF` (the working tree against REF), --base REF --head REF2 the
commits' own trees (REF..REF2); git runs without hooks, filters or external diff drivers, binary files
are left out (listed as skipped), and the range's commit messages join the description.

--description TEXT (or @FILE) says what the change should do: the review's specification (a refactoring
"with no behaviour change" makes every difference a finding). A finding is verified when an execution
reproduces it (a failing test, an input whose old and new results differ); the reading review's
findings are unverified, and --fail-on counts them only with --fail-on-unverified.

With --test, the command runs on the base first, then on the changed code, each in a sandbox (no
network, an empty environment, a size-limited copy of the repository it may write in). It sees /usr and,
read-only at the same paths: the interpreter or tool its first word resolves to on your PATH and its
environment (an active virtualenv or conda environment, the interpreter a virtualenv was made from,
~/.local/lib), Node's global modules, the checkout's node_modules, the cargo home's bin, registry and git
(offline builds) and rustup's toolchains, and every --test-path DIR. PATH inside is yours, keeping what
is visible; the environment is PATH, HOME (a private /tmp), CARGO_HOME/RUSTUP_HOME when bound, and the
variables named by --test-env. A test that passes on the base and fails after the change is a finding
(high); tests failing on the base are listed as pre-existing.

Exit codes: 0 reviewed, nothing at or above --fail-on (or a --base range with nothing to review: no
change, or only binary files, deletions, renames, mode changes or empty files without --test);
1 verified findings at or above --fail-on; 2 bad input or usage (one line); 3 the review was not
completed (no sandbox, the tests cannot run on the base, every model call failed, the budget stopped it
before any stage ran): the output says why first.

Examples:
  git diff main | memdoor review - --agents 5 --test "python3 -m pytest -q"
  memdoor review --base origin/main --test "python3 -m pytest -q" --description @pr.txt --format sarif
  . .venv/bin/activate && memdoor review change.diff --test "python3 -m pytest -q" --fail-on low
  memdoor review change.diff --repo ../project --format sarif > review.sarif
  memdoor review change.diff --model local:qwen2.5-coder-1.5b --json --fail-on medium

The trace is kept in $MEMDOOR_HOME/traces (default ~/.cache/memdoor/traces): memdoor trace ID.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from pathlib import Path

from memdoor.bench.config import parse_params
from memdoor.commands.options import (
    AGENTS,
    MAX_AGENTS,
    MAX_TOKENS_PER_CALL,
    SECONDS,
    SEED,
    TOKENS,
    at_least,
)
from memdoor.core.budget import Budget
from memdoor.core.errors import MemdoorError, NothingToReview, ReviewInputError, SandboxError
from memdoor.review.stages import STAGES, Stage, StageError, stage_order

FORMATS = ("markdown", "json", "sarif")
INCOMPLETE = 3
"""Exit status of a review that could not be completed."""
FAIL_ON = ("info", "low", "medium", "high", "critical", "never")


def stages_list(text: str) -> list[Stage]:
    """``--stages``' comma list, checked as a server's ``review.stages`` is (:func:`stage_order`)."""
    try:
        return stage_order(n.strip() for n in text.split(",") if n.strip())
    except StageError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def configure(p: argparse.ArgumentParser) -> None:
    from memdoor.run.config import DEFAULT_MODEL

    p.add_argument(
        "diff", metavar="DIFF", nargs="?", help="unified diff file, or - for standard input (or use --base)"
    )
    p.add_argument("--repo", type=Path, default=Path("."), metavar="DIR", help="git checkout (default: .)")
    p.add_argument(
        "--base",
        metavar="REF",
        help="review the checkout's change since REF (the working tree, or --head), instead of a DIFF",
    )
    p.add_argument("--head", metavar="REF", help="with --base: review REF's tree (default: the working tree)")
    p.add_argument(
        "--description",
        metavar="TEXT|@FILE",
        help="what the change should do, the review's specification (@FILE reads a file)",
    )
    p.add_argument(
        "--stages",
        type=stages_list,
        default=None,
        metavar="LIST",
        help="stages to run, a comma list of tests, differential, reading (default: all)",
    )
    p.add_argument(
        "--test", metavar="CMD", help="shell command running the tests, e.g. 'python3 -m pytest -q'"
    )
    p.add_argument(
        "--test-path",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a directory the test command also sees, read-only at the same path (repeatable)",
    )
    p.add_argument(
        "--test-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this environment variable to the test command (repeatable; none is passed otherwise)",
    )
    p.add_argument(
        "--agents", type=AGENTS, default=3, metavar="N", help=f"reviewers, 1 to {MAX_AGENTS} (default 3)"
    )
    p.add_argument(
        "--model",
        action="append",
        metavar="SPEC",
        help=f"model spec, repeatable for a mixed team, assigned round-robin (default {DEFAULT_MODEL})",
    )
    p.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default markdown)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="high",
        help="exit 1 when a verified finding is this severe or more (default high; never: always 0)",
    )
    p.add_argument(
        "--fail-on-unverified",
        action="store_true",
        help="--fail-on counts the reading review's unverified findings too",
    )
    from memdoor.review.session import BUDGET_CALLS, BUDGET_TOKENS, MAX_FILES, MAX_PARTS

    p.add_argument(
        "--budget-tokens",
        type=TOKENS,
        default=BUDGET_TOKENS,
        metavar="T",
        help=f"stop after T prompt+completion tokens (default {BUDGET_TOKENS})",
    )
    p.add_argument(
        "--budget-calls",
        type=TOKENS,
        default=BUDGET_CALLS,
        metavar="C",
        help=f"stop after C model calls (default {BUDGET_CALLS})",
    )
    p.add_argument(
        "--max-files",
        type=at_least(1),
        default=MAX_FILES,
        metavar="N",
        help=f"refuse a diff changing more than N files (default {MAX_FILES})",
    )
    p.add_argument(
        "--max-parts",
        type=at_least(1),
        default=MAX_PARTS,
        metavar="N",
        help=f"refuse a review of more than N parts, one per file sent to the agents (default {MAX_PARTS})",
    )
    p.add_argument("--budget-seconds", type=SECONDS, metavar="S", help="stop after S seconds")
    p.add_argument("--test-timeout", type=SECONDS, default=600.0, metavar="S", help="seconds per test run")
    p.add_argument(
        "--part-chars",
        type=at_least(1000),
        default=9000,
        metavar="C",
        help="largest part of the diff (one file and its context) sent to an agent (default 9000)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="base sampling seed (default 0)")
    p.add_argument(
        "--params",
        action="append",
        default=[],
        metavar="SPEC=N",
        help="parameter count of a model the catalog does not know, for the review's compute "
        "(e.g. openai:qwen@http://h/v1=7e9; repeatable)",
    )
    p.add_argument(
        "--max-tokens",
        type=MAX_TOKENS_PER_CALL,
        default=1024,
        help="completion tokens per call (default 1024)",
    )


def read_diff(source: str) -> str:
    """The diff text from a file or ``-`` (stdin); ReviewInputError when it cannot be read as text."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as e:
        raise ReviewInputError(f"cannot read the diff {source}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReviewInputError(f"the diff {source} is not UTF-8 text (a binary file?)") from None


def build_config(args: argparse.Namespace):
    from memdoor.review.session import ReviewConfig
    from memdoor.run.config import DEFAULT_MODEL

    return ReviewConfig(
        agents=args.agents,
        models=args.model or [DEFAULT_MODEL],
        test=args.test,
        fail_on=args.fail_on,
        fail_on_unverified=args.fail_on_unverified,
        stages=args.stages or list(STAGES),
        budget=Budget(tokens=args.budget_tokens, calls=args.budget_calls, seconds=args.budget_seconds),
        seed=args.seed,
        max_tokens=args.max_tokens,
        test_timeout_s=args.test_timeout,
        test_paths=[str(p.resolve()) for p in args.test_path],
        test_env=args.test_env,
        max_part_chars=args.part_chars,
        max_files=args.max_files,
        max_parts=args.max_parts,
        params=parse_params(args.params),
    )


def check_source(args: argparse.Namespace) -> None:
    """ReviewInputError (exit 2) unless exactly one of DIFF and --base is given (--head needs --base)."""
    if args.head is not None and args.base is None:
        raise ReviewInputError("--head needs --base")
    if args.diff is not None and args.base is not None:
        raise ReviewInputError("give a DIFF or --base, not both")
    if args.diff is None and args.base is None:
        raise ReviewInputError("nothing to review: give a DIFF file (- for standard input) or --base REF")


def read_input(args: argparse.Namespace, max_bytes: int, for_tests: bool = False):
    """(diff text, the range or None, the description, the range's commit messages or None): kept apart,
    so that only the user's description can make the refactoring rule. ``for_tests``: a test command will
    run, so a range of binary files alone is read for its tests (an empty diff)."""
    from memdoor.review.description import messages_block, read_description
    from memdoor.review.gitrange import read_range
    from memdoor.review.repo import repo_root

    description = read_description(args.description)
    if args.base is None:
        return read_diff(args.diff), None, description, None
    found = read_range(repo_root(args.repo), args.base, args.head, max_bytes, for_tests)
    return found.diff, found, description, messages_block(found.messages, found.name)


def render(report, fmt: str, source: Path | None) -> str:
    """The report as ``fmt``; ``source``: the changed tree (SARIF fingerprints read its flagged lines)."""
    from memdoor.review.formats import to_json, to_markdown
    from memdoor.review.sarif import to_sarif

    if fmt == "json":
        return json.dumps(to_json(report)) + "\n"
    if fmt == "sarif":
        return json.dumps(to_sarif(report, source), indent=2) + "\n"
    return to_markdown(report)


def run(args: argparse.Namespace) -> int:
    """The command. Under GitHub Actions, what it writes is kept from being read as workflow commands
    (:mod:`memdoor.commands.stopcommands`): its error messages are printed here, where each line of
    standard error is escaped, an unexpected exception's traceback too."""
    from memdoor.commands.stopcommands import active, escaped_stderr, unexpected

    with escaped_stderr():
        try:
            return review_command(args)
        except MemdoorError as e:  # as memdoor.cli.main prints it
            print(f"memdoor: {e}", file=sys.stderr)
            return e.exit_code
        except BrokenPipeError:  # nothing to print: memdoor.cli.main's exit code for it
            raise
        except Exception as e:
            if not active():  # outside Actions as before: Python prints it
                raise
            return unexpected(e)


def review_command(args: argparse.Namespace) -> int:
    from memdoor.commands.stopcommands import print_report
    from memdoor.review.context import Skipped
    from memdoor.review.gitrange import export_tree
    from memdoor.review.repo import shown_name
    from memdoor.review.session import prepare, runs_tests
    from memdoor.review.workspace import workspace

    fmt = "json" if args.json else args.format
    config = build_config(args)
    if args.test is not None and not args.test.strip():
        raise ReviewInputError("--test: the command is empty")
    check_test_options(args)
    check_source(args)
    try:
        text, found, description, messages = read_input(args, config.max_diff_bytes, runs_tests(config))
        config = config.model_copy(update={"description": description, "commit_messages": messages})
        with workspace() as tmp:  # removed however deep a tree is left in it
            repo = args.repo
            if found is not None and found.head_commit is not None:  # the head's tree, not the working tree
                repo = export_tree(Path(args.repo), found.head_commit, Path(tmp) / "head")
            prepared = prepare(text, repo, config, Path(tmp), found)
            if found is not None:
                prepared.skipped += [  # a name that is not UTF-8 as shown_name writes it
                    Skipped(file=shown_name(f), reason="binary file: not reviewed") for f in found.binary
                ]
            report = asyncio.run(_review(prepared, config))
            out = render(report, fmt, prepared.changed)  # while the changed tree is there
    except NothingToReview as e:  # a range's is a result (a CI job, a hook); a diff file's is bad input
        if args.base is None:
            raise
        return nothing_to_review(e, config, fmt)
    except SandboxError as e:  # before any stage ran: nothing computed is lost
        return no_sandbox(e, config, fmt)
    code = INCOMPLETE if not report.complete else (1 if report.fails() else 0)
    try:
        print_report(out, fmt)  # wrapped under GitHub Actions
    except BrokenPipeError:  # the reader went away (`| head`): the exit code still says what was found
        from memdoor.cli import quiet_stdout

        quiet_stdout()
    if report.error:
        print(f"memdoor: review: {report.error}", file=sys.stderr)
    if not report.complete:
        print(f"memdoor: review not completed: {report.incomplete_reason}", file=sys.stderr)
    return code


def nothing_to_review(e: NothingToReview, config, fmt: str) -> int:
    """A range with nothing to review (no change; or only binary files, deletions, renames, mode
    changes or empty files and no test command to run on them): for a CI job or a pre-commit hook a
    result, not an error. Exit 0, a report in ``fmt`` with no finding that says why (code scanning takes
    a SARIF log with no result), the reason in one line on stderr."""
    print_empty(config, fmt, nothing_to_review=str(e))
    print(f"memdoor: {e}", file=sys.stderr)
    return 0


def no_sandbox(e: SandboxError, config, fmt: str) -> int:
    """No sandbox to run anything in, found before any stage ran: exit 3 with a report in ``fmt`` that
    says the review was not completed and why (a CI job's SARIF upload still gets a log), and the
    reason in one line on stderr."""
    reason = f"no sandbox: {e}"
    print_empty(config, fmt, complete=False, incomplete_reason=reason)
    print(f"memdoor: review not completed: {reason}", file=sys.stderr)
    return INCOMPLETE


def print_empty(config, fmt: str, **fields) -> None:
    """Print a report in ``fmt`` with no finding (a review that ran no stage), ``fields`` saying why."""
    from memdoor.commands.stopcommands import print_report
    from memdoor.review.consensus import quorum
    from memdoor.review.session import ReviewReport

    report = ReviewReport(agents=config.agents, quorum=quorum(config.agents), config=config, **fields)
    try:
        print_report(render(report, fmt, None), fmt)
    except BrokenPipeError:
        from memdoor.cli import quiet_stdout

        quiet_stdout()


def check_test_options(args: argparse.Namespace) -> None:
    """ReviewInputError (exit 2) for a --test-path that is not a directory or a bad --test-env name."""
    if (args.test_path or args.test_env) and not args.test:
        raise ReviewInputError("--test-path and --test-env need --test")
    for p in args.test_path:
        if not p.is_dir():
            raise ReviewInputError(f"--test-path {p}: not a directory")
    for name in args.test_env:
        if not name.isidentifier():
            raise ReviewInputError(f"--test-env {name!r}: not a variable name")


async def _review(prepared, config):
    from memdoor.models.pool import ModelPool
    from memdoor.review.session import run_review
    from memdoor.run.env import open_env
    from memdoor.run.tracestore import default_trace_dir

    async with contextlib.AsyncExitStack() as stack:
        pool = ModelPool()
        stack.push_async_callback(pool.aclose)
        for spec in config.models:  # a bad spec or missing weights fail here, as a usage error
            pool.get(spec)
        env = await stack.enter_async_context(open_env(pool=pool, trace_dir=default_trace_dir()))
        return await run_review(prepared, config, env)
