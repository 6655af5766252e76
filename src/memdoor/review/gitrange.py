"""A range of a git checkout as the review's input: ``memdoor review --base REF [--head REF]``.

The diff is git's own, ``git diff BASE HEAD``, pinned to the format the review reads (``a/``/``b/``
prefixes, three lines of context, rename detection, no colour, paths from the top of the checkout) and
made so the repository cannot run anything (``--no-ext-diff --no-textconv``, and
:func:`memdoor.review.repo.hardened_env`: no hooks, no filters, no fsmonitor, no network). The same
limits hold as for a diff file: a diff over ``max_bytes`` is refused (git is stopped once it has
written that much). Binary files cannot be reviewed: they are
left out of the diff and named (the report lists them as skipped), so a pull request that adds an
image is still reviewed. A file is binary by its content alone, as git decides by default (a NUL byte
in its first 8000 bytes, either side): never by the range's own ``.gitattributes`` (``calc.py -diff``,
``binary``), which the change under review writes and could use to hide a text file from the review
(:func:`binary_files`; the diff is made with ``--text``). Submodules are ignored.

Without ``--head``, ``HEAD`` is the working tree as a tree of its own (:func:`worktree_tree`, in a
private repository whose index starts as the checkout's): a file git's stat cache calls unchanged is its
indexed blob, unread; any other is read as ``git add`` reads it (end of line, links, execute bit) but
never through ``ident``, which reads any ``$Id: … $`` as ``$Id$`` and so could hide a change the tests
then run, or a filter (:func:`_to_read` says which files are read). A range in which a tracked file of
either side has a ``working-tree-encoding`` that can make the file a checkout holds say something else
than its blob (UTF-7 checks ``a + b`` out as ``a +- b``) is refused (:data:`SAFE_ENCODING`).

The commit messages of ``BASE..HEAD`` (the newest :data:`MAX_COMMITS`, oldest first) go with the
change's description (:func:`memdoor.review.description.messages_block`): untrusted text, bounded.

With ``--head``, the review reads the head commit's tree, exported from git into the review's own
directory (:func:`export_tree`: a fresh repository that borrows the checkout's objects, its index read
from the commit, its files written by ``checkout-index`` as a checkout writes them, ``ident`` aside), never
the user's working tree, which may hold something else. The base the tests run on comes from the base
commit too, never from the diff reversed (which leaves out the binary files and meets the change's
own end-of-line attributes): with ``--head`` its whole tree, exported the same way; against the
working tree, the copy of the working tree with every path the range changes put back as the base
commit has it (:func:`restore_base`), so the untracked files the working tree's tests may need stay.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, Field

from memdoor.core.errors import NothingToReview, ReviewInputError
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


LOSSY = ("ident", "filter")
"""Attributes through which what git holds for a file may not be its bytes: ``ident`` (``$Id: … $`` is
read as ``$Id$``) and a filter (git-lfs: the index holds a pointer). git's stat cache, whose "clean" was
decided through them, does not vouch for such a file's bytes (:func:`_to_read`)."""
ENCODING = "working-tree-encoding"
"""The attribute by which git re-encodes a file between its blob (UTF-8) and the working tree."""
SAFE_ENCODING = re.compile(r"UTF-?8|(UTF-?(16|32)|UCS-?[24])(LE|BE)?(-?BOM)?", re.IGNORECASE)
"""The ``working-tree-encoding`` values a range may hold (whole match): encodings whose text is the
blob's, character for character, so the file a checkout holds (which the tests run) says what the
review reads. Another one (UTF-7 checks ``a + b`` out as ``a +- b``; a Shift-JIS double byte may end in
a backslash) is refused (:func:`_refuse_encoding`)."""
NEUTRAL_ATTRIBUTES = "* -ident -filter\n"
"""The last lines of the ``info/attributes`` of the review's own repositories, after the checkout's own
(:func:`_borrowing`), so above everything: a file is read (hashed) and written (exported) as ``git add``
and a checkout do (end of line, ``working-tree-encoding``) but with no ``$Id$`` expanded or read back and
no filter."""
MAX_ATTRIBUTES_BYTES = 1 << 20
"""Most bytes of the checkout's ``info/attributes`` the review's repositories copy (more is refused)."""
READ_CONFIG = ("autocrlf", "eol", "symlinks", "filemode", "ignorecase", "precomposeunicode", "attributesfile")
"""The checkout's ``core.*`` settings by which git reads a working tree file (end of line, links, the
execute bit, names, the attributes file), given to the private repository that hashes it."""


def _names(data: bytes) -> set[str]:
    """The paths of a ``-z`` list of git's."""
    return {p for p in data.decode("utf-8", "surrogateescape").split("\0") if p}


def _set_attributes(cwd: Path, paths: list[str], names: tuple[str, ...], *, cached: bool) -> list[list[str]]:
    """(path, attribute, value) of each of ``names`` that ``paths`` of the repository at ``cwd`` have
    (``cached``: by the index's ``.gitattributes`` alone), neither unspecified nor unset."""
    where = ["--cached"] if cached else []
    done = git(["check-attr", "-z", "--stdin", *where, *names], cwd, stdin="".join(f"{p}\0" for p in paths))
    fields = _listed(done, keep_empty=True)
    found = [fields[k : k + 3] for k in range(0, len(fields) - 2, 3)]
    return [f for f in found if f[2] not in ("unspecified", "unset")]


def _refuse_encoding(path: str, value: str, where: str) -> None:
    """ReviewInputError (one line) when ``value``, the ``working-tree-encoding`` of ``path`` (by
    ``where``), is not one of :data:`SAFE_ENCODING`."""
    if not SAFE_ENCODING.fullmatch(value):
        shown = [
            "".join(c if c.isprintable() else ascii(c)[1:-1] for c in shown_name(t)) for t in (path, value)
        ]
        raise ReviewInputError(
            f"{shown[0]}: working-tree-encoding {shown[1]} ({where}) can make the file the tests run say "
            "what the review does not read; a range is reviewed only with UTF-8, UTF-16 or UTF-32 ones"
        )


def _attributes(root: Path, paths: list[str]) -> dict[str, set[str]]:
    """Which of :data:`LOSSY` and :data:`ENCODING` each of ``paths`` of the checkout at ``root`` has, by
    the working tree's ``.gitattributes`` or the index's (git may have read the file by either): only the
    paths with one. ReviewInputError for an encoding :func:`_refuse_encoding` refuses."""
    out: dict[str, set[str]] = {}
    for cached in (False, True):
        for path, name, value in _set_attributes(root, paths, (*LOSSY, ENCODING), cached=cached):
            if name == ENCODING:
                _refuse_encoding(path, value, "the working tree's attributes")
            out.setdefault(path, set()).add(name)
    return out


def _refuse_encodings_of_index(cwd: Path, what: str) -> None:
    """ReviewInputError when a path of the index of the repository at ``cwd`` (a commit's tree, read
    into an export) has an encoding :func:`_refuse_encoding` refuses, by that tree's attributes."""
    paths = sorted(_names(_file_list(["ls-files", "-z"], cwd)))
    for path, _name, value in _set_attributes(cwd, paths, (ENCODING,), cached=True):
        _refuse_encoding(path, value, f"the attributes of {what}")


def _to_read(root: Path, base: str, entries: list[_Entry]) -> tuple[list[_Entry], set[str]]:
    """The entries of the checkout's index whose file is read, and those of them with ``ident``, which are
    their blob when exactly as git checks it out. The others are their indexed blob: git's stat cache
    (``git diff-files``, which compares the content of a racily clean one) says the file is what git last
    wrote or read for it. Read: what ``git diff-files`` names; a file with ``ident``, always (the cache's
    "clean" went through it); a file a filter stores or with a ``working-tree-encoding`` that the range
    changes (the index holds what the filter or the encoding made of it, e.g. a pointer of git-lfs, and the
    tests run the file; one the range leaves is the same file in both runs). Never a submodule, a
    skip-worktree or an assume-unchanged path (:attr:`_Entry.as_indexed`). ReviewInputError when any
    tracked path has an encoding that :func:`_refuse_encoding` refuses (the tests may run any of them)."""
    attrs = _attributes(root, [e.path for e in entries if e.mode != "160000"])
    entries = [e for e in entries if not e.as_indexed]
    if not entries:
        return [], set()
    dirty = _names(_file_list(["diff-files", "--name-only", "-z", "--ignore-submodules=all", "--"], root))
    idents = {p for p, names in attrs.items() if "ident" in names}
    converted = {p for p, names in attrs.items() if names & {"filter", ENCODING}}
    if converted:  # which of them the range changes: the index against the base, no file read
        converted &= _names(_file_list(["diff-index", "--cached", "--name-only", "-z", base, "--"], root))
    wanted = dirty | idents | converted
    return [e for e in entries if e.path in wanted], idents


def _read_config(root: Path) -> list[str]:
    """``-c`` options giving :data:`READ_CONFIG` as the checkout at ``root`` sets them, and
    ``core.safecrlf`` off (a file is read as it is, never refused for its ends of line)."""
    pattern = rf"^core\.({'|'.join(READ_CONFIG)})$"
    values: dict[str, str] = {}
    for item in git(["config", "-z", "--get-regexp", pattern], root).stdout.split("\0"):
        key, has_value, value = item.partition("\n")
        if key:
            values[key] = f"{key}={value}" if has_value else key
    return [arg for setting in [*values.values(), "core.safecrlf=false"] for arg in ("-c", setting)]


def _read_files(root: Path, git_dir: Path, entries: list[_Entry]) -> None:
    """Put the files of ``entries`` into ``git_dir``'s index (the checkout's index copied there) as ``git
    add`` reads them, through the checkout's attributes with :data:`NEUTRAL_ATTRIBUTES` last: the
    checkout's end-of-line conversion and ``working-tree-encoding``, link, execute bit (``core.symlinks``
    false: a file stands for the link the index holds); written into
    ``git_dir``'s objects. A path whose file is missing, not a file or a link, or under a link, is
    deleted. ReviewInputError with git's reason."""
    present, gone = [], []
    for e in entries:
        st = _lstat(root, e.path)
        usable = st is not None and (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode))
        (present if usable else gone).append(e.path)
    options = [*_read_config(root), "--git-dir", str(git_dir), "--work-tree", str(root), "update-index", "-z"]
    for args, paths in ((["--add", "--remove", "--stdin"], present), (["--force-remove", "--stdin"], gone)):
        if paths:
            done = git([*options, *args], root, stdin="".join(f"{p}\0" for p in paths))
            if done.returncode != 0:
                raise ReviewInputError(f"cannot read the working tree of {root}: {_first(done.stderr)}")


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


def _lstat(root: Path, rel: str) -> os.stat_result | None:
    """``rel``'s ``lstat`` in the working tree; None when it is missing or under a link."""
    try:
        return os.lstat(root / rel) if _real_dirs(root, rel, make=False) is not None else None
    except OSError:
        return None


def _in_private(git_dir: Path, args: list[str], stdin: str | None = None) -> str:
    """``git args`` in the private repository ``git_dir``: its output; ReviewInputError with git's reason."""
    done = git(args, git_dir, stdin=stdin)
    if done.returncode != 0:
        raise ReviewInputError(f"cannot read the working tree: git {args[0]}: {_first(done.stderr)}")
    return done.stdout


def worktree_tree(root: Path, dest: Path, base: str) -> str:
    """The working tree of the checkout at ``root`` as a git tree, written into a new bare repository at
    ``dest`` (:func:`_borrowing`), whose index starts as the checkout's; its id. A path git's stat cache
    vouches for is its indexed blob, unread; the others (:func:`_to_read`, which needs the range's
    ``base``) are read as ``git add`` reads them (:func:`_read_files`: end of line, ``working-tree-encoding``)
    but never through ``ident`` (which reads any ``$Id: … $`` as ``$Id$``: a change could hide from ``git
    diff BASE`` and still run) or a filter. A file with ``ident`` exactly as git checks out its indexed blob
    is that blob. Submodules, skip-worktree and assume-unchanged paths are read from the index, as ``git
    diff`` reads them. ReviewInputError for an encoding :func:`_refuse_encoding` refuses."""
    git_dir = _borrowing(root, dest, bare=True, doing="read the working tree")
    entries = _index_entries(root)
    _in_private(git_dir, ["update-index", "-z", "--index-info"], "".join(_index_line(e) for e in entries))
    read, idents = _to_read(root, base, entries)
    _read_files(root, git_dir, read)
    same = _checked_out(root, [e for e in read if e.path in idents], git_dir / "checked-out")
    if same:  # the mode stays the one read from the file
        modes = {e.path: e.mode for e in _index_entries(git_dir)}
        back = [e._replace(mode=modes[e.path]) for e in read if e.path in same and e.path in modes]
        _in_private(git_dir, ["update-index", "-z", "--index-info"], "".join(_index_line(e) for e in back))
    # an object the checkout lacks is no error: a partial clone's blobs outside its sparse checkout
    return _in_private(git_dir, ["write-tree", "--missing-ok"]).strip()


def _index_line(e: _Entry) -> str:
    """``e`` as a line of ``git update-index -z --index-info``."""
    return f"{e.mode} {e.oid}\t{e.path}\0"


@contextlib.contextmanager
def _compared(root: Path, base: str, head: str | None) -> Iterator[tuple[Path, list[str]]]:
    """Where git compares ``base`` with ``head``, and the two revisions: in the checkout at ``root``; or,
    ``head`` None, ``base`` with the working tree (:func:`worktree_tree`), in a private repository
    removed afterwards."""
    if head is not None:
        yield root, [base, head]
        return
    with tempfile.TemporaryDirectory(prefix="memdoor-worktree-") as tmp:
        git_dir = Path(tmp) / "git"
        yield git_dir, [base, worktree_tree(root, git_dir, base)]


def read_range(root: Path, base: str, head: str | None, max_bytes: int, for_tests: bool = False) -> Range:
    """The range ``base..head`` (``head`` None: ``base`` against the working tree) of the checkout at
    ``root``. NothingToReview for no change, or only binary changes unless ``for_tests`` (a test command
    will run: a binary file can break a test, so the range comes back with an empty diff, for its tests
    alone); ReviewInputError for a bad revision, too large a diff, or a
    ``working-tree-encoding`` of either side that :func:`_refuse_encoding` refuses (checked here, before
    anything is reviewed, for the commits :func:`export_tree` writes for the tests)."""
    base_commit = resolve(root, base, "--base")
    head_commit = resolve(root, head, "--head") if head is not None else None
    for commit, flag in ((base_commit, "--base"), (head_commit, "--head")):
        if commit is not None:
            with tempfile.TemporaryDirectory(prefix="memdoor-attributes-") as tmp:
                _read_commit(root, commit, Path(tmp) / "tree", flag)
    with _compared(root, base_commit, head_commit) as (where, revisions):
        binary = binary_files(where, revisions)
        if len(binary) > MAX_BINARY:
            raise ReviewInputError(
                f"the range changes {len(binary)} binary files; a review leaves out at most {MAX_BINARY}"
            )
        diff = range_diff(where, revisions, max_bytes, binary)
    where = f"{base} and {head}" if head is not None else f"{base} and the working tree"
    if not diff.strip() and not (binary and for_tests):
        what = f"only binary files change between {where}" if binary else f"nothing changes between {where}"
        raise NothingToReview(f"{what}: nothing to review")
    messages = commit_messages(root, base_commit, head_commit or "HEAD")
    return Range(root=root, base=base, head=head, base_commit=base_commit, head_commit=head_commit,
                 diff=diff, messages=messages, binary=binary)  # fmt: skip


def _own_attributes(path: str) -> bytes:
    """The checkout's ``info/attributes`` (at ``path``): its bytes, ending in a newline; none when it is
    missing, unreadable or not a regular file (git ignores it then too). ReviewInputError when it is
    larger than :data:`MAX_ATTRIBUTES_BYTES`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        data = f.read(MAX_ATTRIBUTES_BYTES + 1)
    if len(data) > MAX_ATTRIBUTES_BYTES:
        raise ReviewInputError(
            f"the checkout's info/attributes is larger than {MAX_ATTRIBUTES_BYTES:,} bytes"
        )
    return data if not data or data.endswith(b"\n") else data + b"\n"


def _borrowing(root: Path, dest: Path, *, bare: bool, doing: str) -> Path:
    """A new repository at ``dest`` (bare or not), of the object format of the checkout at ``root``, that
    borrows ``root``'s objects (``objects/info/alternates``): what it writes stays in it; its
    ``info/attributes`` the checkout's own (:func:`_own_attributes`: git reads a file of the checkout
    through them) then :data:`NEUTRAL_ATTRIBUTES`, which win. Its git directory. ReviewInputError with
    git's reason, saying what it was for (``doing``)."""
    found = git(
        ["rev-parse", "--show-object-format", "--path-format=absolute", "--git-path", "objects",
         "--git-path", "info/attributes"], root,
    )  # fmt: skip
    lines = found.stdout.split("\n")
    if found.returncode != 0 or len(lines) < 3:
        raise ReviewInputError(f"cannot find the objects of {root}: {_first(found.stderr)}")
    own = _own_attributes(lines[2])
    dest.mkdir(parents=True)
    init = git(["init", "-q", "--template=", f"--object-format={lines[0]}", *(["--bare"] * bare), "."], dest)
    if init.returncode != 0:
        raise ReviewInputError(f"cannot {doing}: git init: {_first(init.stderr)}")
    git_dir = dest if bare else dest / ".git"
    alternates = git_dir / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_bytes(os.fsencode(lines[1]) + b"\n")
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_bytes(own + NEUTRAL_ATTRIBUTES.encode())
    return git_dir


def _read_commit(root: Path, commit: str, dest: Path, what: str) -> None:
    """A new repository at ``dest`` (:func:`_borrowing`) whose index is ``commit``'s tree. ReviewInputError
    with git's reason, or for an encoding of that tree that :func:`_refuse_encoding` refuses."""
    _borrowing(root, dest, bare=False, doing=f"export the tree of {what}")
    done = git(["read-tree", commit], dest)
    if done.returncode != 0:
        raise ReviewInputError(f"cannot export the tree of {what}: git read-tree: {_first(done.stderr)}")
    _refuse_encodings_of_index(dest, what)


def export_tree(
    root: Path, commit: str, dest: Path, *, paths: list[str] | None = None, what: str = "--head"
) -> Path:
    """The tree of ``commit`` (of the checkout at ``root``) as a checkout of its own at ``dest``: a new
    repository borrowing ``root``'s objects, its index read from the commit (:func:`_read_commit`), its
    files written by git (``checkout-index``: git's own checks on paths and links) as a checkout writes
    them, through the checkout's ``info/attributes`` and :data:`NEUTRAL_ATTRIBUTES`: the tree's own
    end-of-line and ``working-tree-encoding`` attributes apply (a UTF-16 file is UTF-16, as the tests
    would find it in any checkout; an encoding that changes what the text says is refused,
    :func:`_refuse_encoding`), but no ``ident`` (``$Id$`` stays as the blob, and the review, has it) and
    no filter. ``paths``: only those of them the commit has. ReviewInputError with git's reason, naming
    ``what`` the commit is."""
    _read_commit(root, commit, dest, what)
    args, stdin = ["checkout-index", "--all", "--force"], None
    if paths is not None:  # only the paths asked for (and that the commit has)
        have = set(_listed(git(["ls-files", "-z"], dest)))
        args, stdin = (
            ["checkout-index", "--force", "-z", "--stdin"],
            "".join(f"{p}\0" for p in paths if p in have),
        )
    done = git(args, dest, stdin=stdin)
    if done.returncode != 0:
        raise ReviewInputError(f"cannot export the tree of {what}: git checkout-index: {_first(done.stderr)}")
    return dest


def _listed(done: subprocess.CompletedProcess[str], *, keep_empty: bool = False) -> list[str]:
    """The fields of git's ``-z`` output (``keep_empty``: an empty one too, but for the end);
    ReviewInputError when git failed."""
    if done.returncode != 0:
        raise ReviewInputError(f"git {done.args[1]} failed: {_first(done.stderr)}")
    fields = done.stdout.split("\0")
    return fields[:-1] if keep_empty else [p for p in fields if p]


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
    differ (the working tree read as :func:`worktree_tree` reads it): every path :func:`changed_paths`
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
