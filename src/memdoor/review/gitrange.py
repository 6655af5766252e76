"""A range of a git checkout as the review's input: ``memdoor review --base REF [--head REF]``.

The diff is git's own, ``git diff BASE HEAD``, pinned to the format the review reads (``a/``/``b/``
prefixes, three lines of context, rename detection, no colour, paths from the top of the checkout) and
made so the repository cannot run anything (``--no-ext-diff --no-textconv``, and
:func:`memdoor.review.repo.hardened_env`: no hooks, no filters, no fsmonitor, no network). The same limits hold as for a diff file: a diff over ``max_bytes`` is
refused (git is stopped once it has written that much). Binary files cannot be reviewed: they are
left out of the diff and named (the report lists them as skipped), so a pull request that adds an
image is still reviewed. A file is binary by its content alone, as git decides by default (a NUL byte
in its first 8000 bytes, either side): never by the range's own ``.gitattributes`` (``calc.py -diff``,
``binary``), which the change under review writes and could use to hide a text file from the review
(:func:`binary_files`; the diff is made with ``--text``). Submodules are ignored.

Without ``--head``, ``HEAD`` is the working tree as a tree of its own (:func:`worktree_tree`, in a
private repository): each file's bytes, never read through the checkout's ``.gitattributes``, whose
``ident`` reads any ``$Id: … $`` as ``$Id$`` and so could hide a change the tests then run; a file
that is exactly what git checks out for its indexed blob (end of line, ``ident``) is that blob.

The commit messages of ``BASE..HEAD`` (the newest :data:`MAX_COMMITS`, oldest first) go with the
change's description (:func:`memdoor.review.description.messages_block`): untrusted text, bounded.

With ``--head``, the review reads the head commit's tree, exported from git into the review's own
directory (:func:`export_tree`: a fresh repository that borrows the checkout's objects, its index read
from the commit, its files written by ``checkout-index`` with every filter emptied), never the
user's working tree, which may hold something else. The base the tests run on comes from the base
commit too, never from the diff reversed (which leaves out the binary files and meets the change's
own end-of-line attributes): with ``--head`` its whole tree, exported the same way; against the
working tree, the copy of the working tree with every path the range changes put back as the base
commit has it (:func:`restore_base`), so the untracked files the working tree's tests may need stay.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, Field

from memdoor.core.errors import ReviewInputError
from memdoor.review.description import cut_messages
from memdoor.review.repo import GIT_TIMEOUT_S, git, hardened_env, shown_name

MAX_COMMITS = 200
"""Commits whose messages are read from a range (the newest)."""
MAX_BINARY = 1000
"""Binary files a range may change (they are left out by name; more is refused)."""
MAX_REF_CHARS = 1000
MAX_LIST_BYTES = 64 << 20
"""Most bytes of git's list of the files a range changes (more is refused: review the range in parts)."""
FIRST_BYTES = 8000
"""Bytes of a file git reads for a NUL byte to call it binary (its default, without attributes)."""
DIFF_OPTIONS = (
    "--no-ext-diff",
    "--no-textconv",
    "--text",  # binary is decided here, by content (binary_files): not by the range's .gitattributes
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

    root: Path = Field(description="The top of the checkout the range is read from (the user's).")
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
    """The commit ``ref`` names in the checkout at ``root``; ReviewInputError (one line) when none, or
    when the name is not UTF-8 (it would go into the report and the trace, which hold text only)."""
    if any("\ud800" <= c <= "\udfff" for c in ref):  # bytes that are not UTF-8, kept as surrogates
        raise ReviewInputError(f"{flag} {_shown_ref(ref)}: not a git revision (not UTF-8)")
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


def _shown_ref(ref: str) -> str:
    r"""``ref`` as text: each byte that is not UTF-8 written ``\xNN`` (:func:`shown_name`), or escaped
    as Python would when it holds a surrogate no byte gives."""
    try:
        return shown_name(ref)
    except UnicodeEncodeError:
        return ascii(ref)


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


def _file_list(args: list[str], root: Path) -> bytes:
    """git's list of the files the range changes (``args``), whole: ReviewInputError (one line) when it is
    longer than :data:`MAX_LIST_BYTES`, never a list cut short."""
    data, over = bounded_git(args, root, MAX_LIST_BYTES)
    if over:
        raise ReviewInputError(
            f"the list of the files the range changes is larger than {MAX_LIST_BYTES:,} bytes; review it in parts"
        )
    return data


def _raw_entries(data: bytes) -> list[tuple[list[str], list[str], list[str]]]:
    """(modes, object ids, paths) of each entry of ``git diff --raw -z --no-abbrev``: old and new mode
    and id, and the path (both paths of a rename or copy)."""
    tokens = data.decode("utf-8", "surrogateescape").split("\0")
    out, k = [], 0
    while k < len(tokens) and tokens[k].startswith(":"):
        fields = tokens[k][1:].split()
        names = 2 if fields[4][:1] in ("R", "C") else 1
        out.append((fields[0:2], fields[2:4], tokens[k + 1 : k + 1 + names]))
        k += 1 + names
    return out


class _Blobs:
    """The first :data:`FIRST_BYTES` of git objects, read from one ``git cat-file --batch`` (hardened;
    killed after the git time limit)."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen(
            ["git", "cat-file", "--batch"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=hardened_env(root),
        )  # fmt: skip
        self.timer = threading.Timer(GIT_TIMEOUT_S, self.proc.kill)
        self.timer.start()

    def head(self, oid: str) -> bytes:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(f"{oid}\n".encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise ReviewInputError("git cat-file stopped before reading the range's files") from None
        header = self.proc.stdout.readline().split()
        if len(header) != 3 or not header[2].isdigit():  # missing, or git was stopped
            if not header:
                raise ReviewInputError(f"git cat-file took more than {GIT_TIMEOUT_S:g} s or failed")
            return b""
        size = int(header[2])
        first = self.proc.stdout.read(min(size, FIRST_BYTES))
        left = size - len(first) + 1  # the rest, and the newline after the object
        while left > 0:
            chunk = self.proc.stdout.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
        return first

    def close(self) -> None:
        self.timer.cancel()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.kill()
        self.proc.wait()


def binary_files(root: Path, revisions: list[str]) -> list[str]:
    """Files of the range (two trees) that are binary by content, as git decides without attributes: a
    NUL byte in the first :data:`FIRST_BYTES` of either side (a link's target is text). Both names of a
    renamed one."""
    data = _file_list(["diff", "--raw", "-z", "--no-abbrev", *DIFF_OPTIONS, *revisions, "--"], root)
    out: set[str] = set()
    try:
        blobs = _Blobs(root)
    except FileNotFoundError:
        raise ReviewInputError("git is not installed (it is needed to read the range)") from None
    try:
        for modes, oids, paths in _raw_entries(data):
            for mode, oid in zip(modes, oids, strict=True):
                # not absent (000000), a link (120000) or a submodule (160000)
                if mode.startswith("10") and b"\0" in blobs.head(oid):
                    out.update(paths)
    finally:
        blobs.close()
    return sorted(out)


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


class _Entry(NamedTuple):
    """One path of the checkout's index (``git ls-files --stage -v``)."""

    tag: str
    mode: str
    oid: str
    path: str

    @property
    def as_indexed(self) -> bool:
        """Whether git reads it from the index, not from the file: a submodule, a path outside a sparse
        checkout (skip-worktree, ``S``) or marked assume-unchanged (a lowercase tag), as ``git diff`` does."""
        return self.mode == "160000" or self.tag in ("S", "s") or self.tag.islower()


def _index_entries(root: Path) -> list[_Entry]:
    """The paths of the index of the checkout at ``root``, once each (a conflicted one by its first
    stage)."""
    out: dict[str, _Entry] = {}
    for line in _listed(git(["ls-files", "-z", "--stage", "-v"], root)):
        head, _, path = line.partition("\t")
        tag, mode, oid, _stage = head.split(" ")
        out.setdefault(path, _Entry(tag, mode, oid, path))
    return list(out.values())


def _stdin_path(path: str) -> str:
    """``path`` as ``git hash-object --stdin-paths`` reads it: quoted as C (every byte that is not
    printable ASCII in octal) when it holds a newline or starts with a quote, else as it is."""
    if "\n" not in path and not path.startswith('"'):
        return path
    raw = path.encode("utf-8", "surrogateescape")
    inner = "".join(chr(b) if 32 <= b < 127 and b not in b'"\\' else f"\\{b:03o}" for b in raw)
    return f'"{inner}"'


def _hashed(root: Path, paths: list[str], git_dir: Path | None = None) -> list[str]:
    """git's ids of the files ``paths`` (relative to ``root``, or absolute) as their bytes are
    (``hash-object --no-filters``: no attribute of the checkout converts them); ``git_dir``: written
    into that repository's objects. ReviewInputError with git's reason."""
    if not paths:
        return []
    where = ["--git-dir", str(git_dir)] if git_dir is not None else []
    args = [*where, "hash-object", "--no-filters", "--stdin-paths", *(["-w"] if git_dir is not None else [])]
    done = git(args, root, stdin="".join(f"{_stdin_path(p)}\n" for p in paths))
    ids = done.stdout.split()
    if done.returncode != 0 or len(ids) != len(paths):
        raise ReviewInputError(
            f"cannot read the working tree of {root}: git hash-object: {_first(done.stderr)}"
        )
    return ids


def _file_bytes(root: Path, rel: str) -> bytes | None:
    """The bytes of the regular file ``rel`` of the working tree (a link is never followed)."""
    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    finally:
        os.close(fd)


def _checked_out(root: Path, entries: list[_Entry], scratch: Path) -> set[str]:
    """The paths of ``entries`` whose file holds exactly what git writes for their indexed blob (end of
    line, ``ident``; written by ``checkout-index`` into ``scratch``, never into the checkout): files as
    git checked them out, whose reviewed content is that blob."""
    if not entries:
        return set()
    paths = "".join(f"{e.path}\0" for e in entries)
    git(["checkout-index", f"--prefix={scratch}/", "--force", "-z", "--stdin"], root, stdin=paths)
    out = set()  # a path git could not write (an unmerged one) is read as its bytes
    for e in entries:
        written = _file_bytes(scratch, e.path)
        if written is not None and written == _file_bytes(root, e.path):
            out.add(e.path)
    return out


def _exec_bit_counts(root: Path) -> bool:
    """Whether the checkout at ``root`` reads a file's execute bit (``core.filemode``, true by default)."""
    return git(["config", "--type=bool", "core.filemode"], root).stdout.strip() != "false"


def _regular_mode(entry: _Entry, st: os.stat_result, exec_bit: bool) -> str:
    """The mode git gives a regular file of the working tree: its owner's execute bit, or the index's
    mode when the checkout ignores that bit (``exec_bit`` false)."""
    if not exec_bit and entry.mode in ("100644", "100755"):
        return entry.mode
    return "100755" if st.st_mode & stat.S_IXUSR else "100644"


def _lstat(root: Path, rel: str) -> os.stat_result | None:
    """``rel``'s ``lstat`` in the working tree; None when it is missing or under a link."""
    try:
        return os.lstat(root / rel) if _real_dirs(root, rel, make=False) is not None else None
    except OSError:
        return None


def _link_entries(root: Path, git_dir: Path, links: list[_Entry]) -> list[tuple[str, str, str]]:
    """(mode, id, path) of the links ``links`` of the working tree: each target hashed as a blob
    (written out under ``git_dir`` first, then into its objects)."""
    names = []
    for n, e in enumerate(links):
        names.append(git_dir / "links" / str(n))
        names[-1].parent.mkdir(exist_ok=True)
        names[-1].write_bytes(os.readlink(os.fsencode(root / e.path)))
    ids = _hashed(root, [str(p) for p in names], git_dir)
    return [("120000", oid, e.path) for oid, e in zip(ids, links, strict=True)]


def _file_entries(root: Path, git_dir: Path, files: list[tuple[_Entry, str]]) -> list[tuple[str, str, str]]:
    """(mode, id, path) of the regular files ``files`` (each with its mode): the bytes of the file
    (written into ``git_dir``'s objects when no object has them yet), or its indexed blob when the file
    is exactly what git checks out for it (:func:`_checked_out`)."""
    raw = _hashed(root, [e.path for e, _ in files])
    differ = [e for (e, _), oid in zip(files, raw, strict=True) if oid != e.oid]
    as_blob = _checked_out(root, differ, git_dir / "checked-out")
    _hashed(root, [e.path for e in differ if e.path not in as_blob], git_dir)
    return [
        (mode, e.oid if e.path in as_blob else oid, e.path) for (e, mode), oid in zip(files, raw, strict=True)
    ]


def worktree_tree(root: Path, dest: Path) -> str:
    """The working tree of the checkout at ``root`` as a git tree, written into a new bare repository at
    ``dest`` (:func:`_borrowing`); its id. Every path of the index, read from its file as its bytes are,
    never through the checkout's attributes (``ident`` reads any ``$Id: … $`` as ``$Id$``: a change
    could hide from ``git diff BASE`` and still run); a file that holds exactly what git checks out for
    its indexed blob (end of line, ``ident``) is that blob, as with ``--head``. Submodules, skip-worktree
    and assume-unchanged paths are read from the index, as ``git diff`` reads them; a path whose file is
    missing, not a file or a link, or under a link, is deleted."""
    git_dir = _borrowing(root, dest, bare=True, doing="read the working tree")
    exec_bit = _exec_bit_counts(root)
    index: list[tuple[str, str, str]] = []  # mode, id, path
    files: list[tuple[_Entry, str]] = []  # a regular file's entry and mode
    links: list[_Entry] = []
    for e in _index_entries(root):
        st = None if e.as_indexed else _lstat(root, e.path)
        if e.as_indexed:
            index.append((e.mode, e.oid, e.path))
        elif st is not None and stat.S_ISLNK(st.st_mode):
            links.append(e)
        elif st is not None and stat.S_ISREG(st.st_mode):
            files.append((e, _regular_mode(e, st, exec_bit)))
    index += _link_entries(root, git_dir, links) + _file_entries(root, git_dir, files)
    return _write_tree(git_dir, index)


def _write_tree(git_dir: Path, index: list[tuple[str, str, str]]) -> str:
    """The id of the tree of ``index`` (mode, id, path), written in the repository ``git_dir``. An object
    the checkout does not have is no error (``--missing-ok``): a partial clone's blobs outside its sparse
    checkout, which git reads from the index, as ``git diff`` does."""
    entries = "".join(f"{mode} {oid}\t{path}\0" for mode, oid, path in index)
    for args, stdin in (
        (["update-index", "-z", "--index-info"], entries),
        (["write-tree", "--missing-ok"], None),
    ):
        done = git(args, git_dir, stdin=stdin)
        if done.returncode != 0:
            raise ReviewInputError(f"cannot read the working tree: git {args[0]}: {_first(done.stderr)}")
    return done.stdout.strip()


@contextlib.contextmanager
def _compared(root: Path, base: str, head: str | None) -> Iterator[tuple[Path, list[str]]]:
    """Where git compares ``base`` with ``head``, and the two revisions: in the checkout at ``root``; or,
    ``head`` None, ``base`` with the working tree's own bytes (:func:`worktree_tree`), in a private
    repository removed afterwards."""
    if head is not None:
        yield root, [base, head]
        return
    with tempfile.TemporaryDirectory(prefix="memdoor-worktree-") as tmp:
        git_dir = Path(tmp) / "git"
        yield git_dir, [base, worktree_tree(root, git_dir)]


def read_range(root: Path, base: str, head: str | None, max_bytes: int) -> Range:
    """The range ``base..head`` (``head`` None: ``base`` against the working tree) of the checkout at
    ``root``. ReviewInputError for a bad revision, no change, only binary changes, or too large a diff."""
    base_commit = resolve(root, base, "--base")
    head_commit = resolve(root, head, "--head") if head is not None else None
    with _compared(root, base_commit, head_commit) as (where, revisions):
        binary = binary_files(where, revisions)
        if len(binary) > MAX_BINARY:
            raise ReviewInputError(
                f"the range changes {len(binary)} binary files; a review leaves out at most {MAX_BINARY}"
            )
        diff = range_diff(where, revisions, max_bytes, binary)
    where = f"{base} and {head}" if head is not None else f"{base} and the working tree"
    if not diff.strip():
        what = f"only binary files change between {where}" if binary else f"nothing changes between {where}"
        raise ReviewInputError(f"{what}: nothing to review")
    messages = commit_messages(root, base_commit, head_commit or "HEAD")
    return Range(root=root, base=base, head=head, base_commit=base_commit, head_commit=head_commit,
                 diff=diff, messages=messages, binary=binary)  # fmt: skip


def _borrowing(root: Path, dest: Path, *, bare: bool, doing: str) -> Path:
    """A new repository at ``dest`` (bare or not), of the object format of the checkout at ``root``, that
    borrows ``root``'s objects (``objects/info/alternates``): what it writes stays in it. Its git
    directory. ReviewInputError with git's reason, saying what it was for (``doing``)."""
    found = git(
        ["rev-parse", "--show-object-format", "--path-format=absolute", "--git-path", "objects"], root
    )
    lines = found.stdout.split("\n")
    if found.returncode != 0 or len(lines) < 2:
        raise ReviewInputError(f"cannot find the objects of {root}: {_first(found.stderr)}")
    dest.mkdir(parents=True)
    init = git(["init", "-q", "--template=", f"--object-format={lines[0]}", *(["--bare"] * bare), "."], dest)
    if init.returncode != 0:
        raise ReviewInputError(f"cannot {doing}: git init: {_first(init.stderr)}")
    git_dir = dest if bare else dest / ".git"
    alternates = git_dir / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_bytes(os.fsencode(lines[1]) + b"\n")
    return git_dir


def export_tree(
    root: Path, commit: str, dest: Path, *, paths: list[str] | None = None, what: str = "--head"
) -> Path:
    """The tree of ``commit`` (of the checkout at ``root``) as a checkout of its own at ``dest``: a new
    repository borrowing ``root``'s objects (:func:`_borrowing`), its index read from the commit, its
    files written by git (``checkout-index``: git's own checks on paths and links; filters emptied).
    ``paths``: only those of them the commit has. ReviewInputError with git's reason, naming ``what``
    the commit is."""
    _borrowing(root, dest, bare=False, doing=f"export the tree of {what}")
    steps: list[tuple[list[str], str | None]] = [
        (["read-tree", commit], None),
        (["checkout-index", "--all", "--force"], None),
    ]
    for n, (args, stdin) in enumerate(steps):
        done = git(args, dest, stdin=stdin)
        if done.returncode != 0:
            raise ReviewInputError(f"cannot export the tree of {what}: git {args[0]}: {_first(done.stderr)}")
        if n == 0 and paths is not None:  # only the paths asked for (and that the commit has)
            have = set(_listed(git(["ls-files", "-z"], dest)))
            wanted = [p for p in paths if p in have]
            steps[1] = (["checkout-index", "--force", "-z", "--stdin"], "".join(f"{p}\0" for p in wanted))
    return dest


def _listed(done: subprocess.CompletedProcess[str]) -> list[str]:
    if done.returncode != 0:
        raise ReviewInputError(f"git {done.args[1]} failed: {_first(done.stderr)}")
    return [p for p in done.stdout.split("\0") if p]


def changed_paths(root: Path, revisions: list[str]) -> list[str]:
    """Every path that differs between ``revisions`` (two trees), binary files and both sides of a rename
    included; ReviewInputError for a path git would never write."""
    options = [o for o in DIFF_OPTIONS if o != "--find-renames"]
    data = _file_list(["diff", "--name-only", "-z", "--no-renames", *options, *revisions, "--"], root)
    out = [p for p in data.decode("utf-8", "surrogateescape").split("\0") if p]
    for p in out:
        if any(part in ("", ".", "..") for part in p.split("/")):
            raise ReviewInputError(f"the range names a path that is not a file of a checkout: {p!r}")
    return out


def _real_dirs(top: Path, rel: str, *, make: bool) -> Path | None:
    """``top / rel``'s parent when every directory on the way from ``top`` is a real one (no link is ever
    followed). ``make``: missing ones are made, and a link or file in the way is replaced by a directory;
    otherwise None when the way is not all real directories (then nothing of ``top`` is at ``rel``)."""
    at = top
    for part in rel.split("/")[:-1]:
        at = at / part
        try:
            mode = os.lstat(at).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            continue
        if not make:
            return None
        if mode is not None:
            os.unlink(at)
        at.mkdir()
    return at


def _remove(top: Path, rel: str) -> None:
    """Remove ``top / rel`` (a file, a link, or a directory and all in it) without following any link."""
    if _real_dirs(top, rel, make=False) is None:
        return
    target = top / rel
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(target)
    else:
        os.unlink(target)


def restore_base(root: Path, commit: str, copy: Path, scratch: Path) -> None:
    """Make ``copy`` (a copy of the working tree of the checkout at ``root``) ``commit``'s where the two
    differ (the working tree read as its bytes, :func:`worktree_tree`): every path :func:`changed_paths`
    names is removed, then written back as ``commit`` has it (exported by git into ``scratch``,
    :func:`export_tree`, and moved in; no link of ``copy`` is followed). Files git does not track (the
    working tree's own) stay. ReviewInputError with git's reason."""
    with _compared(root, commit, None) as (where, revisions):
        paths = changed_paths(where, revisions)
    tree = export_tree(root, commit, scratch, paths=paths, what="--base")
    for rel in paths:
        _remove(copy, rel)
    for rel in paths:
        if os.path.lexists(tree / rel):
            _real_dirs(copy, rel, make=True)
            _remove(copy, rel)  # a directory another path made on the way
            os.rename(tree / rel, copy / rel)


def _first(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no reason given")
