"""A range of a git checkout as the review's input: ``memdoor review --base REF [--head REF]``.

The diff is git's own, ``git diff BASE HEAD`` (``BASE`` against the working tree without ``--head``),
pinned to the format the review reads (``a/``/``b/`` prefixes, three lines of context, rename detection,
no colour, paths from the top of the checkout) and made so the repository cannot run anything
(``--no-ext-diff --no-textconv``, and :func:`memdoor.review.repo.hardened_env`: no hooks, no filters,
no fsmonitor, no network). The same limits hold as for a diff file: a diff over ``max_bytes`` is
refused (git is stopped once it has written that much). Binary files cannot be reviewed: they are
left out of the diff and named (the report lists them as skipped), so a pull request that adds an
image is still reviewed. Submodules are ignored.

The commit messages of ``BASE..HEAD`` (the newest :data:`MAX_COMMITS`, oldest first) go with the
change's description (:func:`memdoor.review.description.messages_block`): untrusted text, bounded.

With ``--head``, the review reads the head commit's tree, exported from git into the review's own
directory (:func:`export_tree`: a fresh repository that borrows the checkout's objects, its index read
from the commit, its files written by ``checkout-index`` with every filter emptied), never the
user's working tree, which may hold something else.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.core.errors import ReviewInputError
from memdoor.review.description import cut_messages
from memdoor.review.repo import GIT_TIMEOUT_S, git, hardened_env

MAX_COMMITS = 200
"""Commits whose messages are read from a range (the newest)."""
MAX_BINARY = 1000
"""Binary files a range may change (they are left out by name; more is refused)."""
MAX_REF_CHARS = 1000
DIFF_OPTIONS = (
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--ignore-submodules=all",
    "--find-renames",
    "--unified=3",
)
"""How the range's diff is made, whatever the user's git configuration says."""


class Range(BaseModel):
    """What a range gives the review: its diff, its commit messages, the files left out."""

    base: str = Field(description="--base as given.")
    head: str | None = Field(default=None, description="--head as given (None: the working tree).")
    base_commit: str
    head_commit: str | None = None
    diff: str
    messages: str = Field(default="", description="Commit messages of base..head, bounded.")
    binary: list[str] = Field(default_factory=list, description="Binary files left out of the diff.")

    @property
    def name(self) -> str:
        return f"{self.base}..{self.head or 'HEAD'}"


def resolve(root: Path, ref: str, flag: str) -> str:
    """The commit ``ref`` names in the checkout at ``root``; ReviewInputError (one line) when none."""
    if (
        not ref
        or ref.startswith("-")
        or len(ref) > MAX_REF_CHARS
        or any(c.isspace() or ord(c) < 32 for c in ref)
    ):
        raise ReviewInputError(f"{flag} {ref!r}: not a git revision")
    done = git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root)
    if done.returncode != 0:
        raise ReviewInputError(f"{flag} {ref}: no such commit in {root}")
    return done.stdout.strip()


def bounded_git(args: list[str], cwd: Path, limit: int) -> tuple[bytes, bool]:
    """``git`` (hardened)'s output, read up to ``limit`` bytes: (output, whether git wrote more, in which
    case it was stopped). ReviewInputError when git fails or takes longer than the git time limit."""
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                ["git", *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                env=hardened_env(cwd),
            )  # fmt: skip
        except FileNotFoundError:
            raise ReviewInputError("git is not installed (it is needed to read the range)") from None
        timer = threading.Timer(GIT_TIMEOUT_S, proc.kill)
        timer.start()
        try:
            assert proc.stdout is not None
            data = proc.stdout.read(limit + 1)
            over = len(data) > limit
            if over:
                proc.kill()
            proc.stdout.close()
            code = proc.wait()
        finally:
            timer.cancel()
        if over:
            return data[:limit], True
        if code != 0:
            err.seek(0)
            why = err.read(4000).decode("utf-8", "replace").strip().splitlines()
            if code < 0:
                raise ReviewInputError(f"git {args[0]} took more than {GIT_TIMEOUT_S:g} s in {cwd}")
            raise ReviewInputError(f"git {args[0]} failed: {why[0] if why else f'exit {code}'}")
    return data, False


def binary_files(root: Path, revisions: list[str]) -> list[str]:
    """Files of the range git sees as binary (``--numstat`` gives them ``-`` counts), both names of a
    renamed one."""
    data, _ = bounded_git(["diff", "--numstat", "-z", *DIFF_OPTIONS, *revisions, "--"], root, 64 << 20)
    tokens = data.decode("utf-8", "surrogateescape").split("\0")
    out, k = [], 0
    while k < len(tokens) and tokens[k]:
        added, deleted, path = tokens[k].split("\t", 2)
        names = [path] if path else tokens[k + 1 : k + 3]  # a rename: the old and new names follow
        k += 1 if path else 3
        if added == "-" and deleted == "-":
            out += names
    return sorted(set(out))


def range_diff(root: Path, revisions: list[str], max_bytes: int, binary: list[str]) -> str:
    """The diff of ``revisions`` (without the ``binary`` files), refused over ``max_bytes``."""
    excluded = [f":(exclude,literal){p}" for p in binary]
    data, over = bounded_git(["diff", *DIFF_OPTIONS, *revisions, "--", ".", *excluded], root, max_bytes)
    if over:
        raise ReviewInputError(
            f"the diff is larger than {max_bytes:,} bytes, the most a review takes; review it in parts"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReviewInputError("the diff is not UTF-8 text") from None


def commit_messages(root: Path, base: str, head: str) -> str:
    """The messages of the newest :data:`MAX_COMMITS` commits of ``base..head``, oldest first, bounded."""
    args = ["log", "--no-show-signature", "--no-color", "--no-notes", "--reverse", f"--max-count={MAX_COMMITS}",
            "-z", "--format=%B", f"{base}..{head}", "--"]  # fmt: skip
    data, _ = bounded_git(args, root, 1 << 20)
    return cut_messages(data.decode("utf-8", "replace").split("\0"))


def read_range(root: Path, base: str, head: str | None, max_bytes: int) -> Range:
    """The range ``base..head`` (``head`` None: ``base`` against the working tree) of the checkout at
    ``root``. ReviewInputError for a bad revision, no change, only binary changes, or too large a diff."""
    base_commit = resolve(root, base, "--base")
    head_commit = resolve(root, head, "--head") if head is not None else None
    revisions = [base_commit] + ([head_commit] if head_commit else [])
    binary = binary_files(root, revisions)
    if len(binary) > MAX_BINARY:
        raise ReviewInputError(
            f"the range changes {len(binary)} binary files; a review leaves out at most {MAX_BINARY}"
        )
    diff = range_diff(root, revisions, max_bytes, binary)
    where = f"{base} and {head}" if head is not None else f"{base} and the working tree"
    if not diff.strip():
        what = f"only binary files change between {where}" if binary else f"nothing changes between {where}"
        raise ReviewInputError(f"{what}: nothing to review")
    messages = commit_messages(root, base_commit, head_commit or "HEAD")
    return Range(base=base, head=head, base_commit=base_commit, head_commit=head_commit, diff=diff,
                 messages=messages, binary=binary)  # fmt: skip


def export_tree(root: Path, commit: str, dest: Path) -> Path:
    """The tree of ``commit`` (of the checkout at ``root``) as a checkout of its own at ``dest``: a new
    repository borrowing ``root``'s objects (``objects/info/alternates``), its index read from the
    commit, its files written by git (``checkout-index``: git's own checks on paths and links; filters
    emptied). ReviewInputError with git's reason."""
    objects = git(["rev-parse", "--path-format=absolute", "--git-path", "objects"], root)
    if objects.returncode != 0:
        raise ReviewInputError(f"cannot find the objects of {root}: {_first(objects.stderr)}")
    dest.mkdir(parents=True)
    steps = (
        ["init", "-q", "--template=", "."],
        ["read-tree", commit],
        ["checkout-index", "--all", "--force"],
    )
    for n, args in enumerate(steps):
        done = git(args, dest)
        if done.returncode != 0:
            raise ReviewInputError(f"cannot export the tree of --head: git {args[0]}: {_first(done.stderr)}")
        if n == 0:
            alternates = dest / ".git" / "objects" / "info" / "alternates"
            alternates.parent.mkdir(parents=True, exist_ok=True)
            alternates.write_text(objects.stdout.strip() + "\n")
    return dest


def _first(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no reason given")
