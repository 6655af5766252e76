"""The repository a diff is reviewed against: where it is, whether the diff applies, and working copies.

The diff is applied to a copy, never to the user's tree. ``git diff main | memdoor review -`` run in a
checkout that already holds the change is recognised too: the diff then applies in reverse, and the
tree as it is already is the changed code. A diff that applies both ways is refused: which tree is the
changed code cannot be told. A range (``--base``) is never applied: its head is the changed code.

Every git command runs so that the repository under review cannot make it run a program
(:func:`hardened_env`): no hooks (``core.hooksPath=/dev/null``), no fsmonitor, no external diff, no
signature check, no network and no transport at all (``GIT_ALLOW_PROTOCOL`` empty, which outranks the
repository's own ``protocol.<name>.allow``; no lazy fetch of a partial clone's missing objects), and
every filter driver the configuration names (the commands a ``.gitattributes`` ``filter=`` would start,
e.g. on the working tree) emptied. Nor can the caller's environment point git at another repository or
index (a hook's ``GIT_INDEX_FILE``): the variables naming them are dropped.

git's output is read as UTF-8 with ``surrogateescape``: a file name that is not UTF-8 (an untracked
``u\\xfe.txt`` beside the change) is kept as the bytes it is, so copying it still works, and is shown
with those bytes written ``\\xNN`` wherever it is reported (:func:`shown_name`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.core.errors import ReviewInputError
from memdoor.review.diff import FileDiff

GIT_TIMEOUT_S = 120.0
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),
)
"""Configuration every git command of the review runs with (as ``git -c`` would give it)."""
DROPPED_ENV = (
    "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "EDITOR", "VISUAL", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT",
    "GIT_PROXY_COMMAND",
)  # fmt: skip
"""Variables that could make git start a program; never passed to it."""
LOCAL_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
)  # fmt: skip
"""Variables that point git at another repository, index, object store or set of refs than the one the
review names by its directory (``git rev-parse --local-env-vars``, as of git 2.39, and the namespace; the
list the installed git prints is added at run time, :func:`local_env_vars`): never passed to it. A
pre-commit hook's ``GIT_INDEX_FILE`` would otherwise have git write the review's index into the commit's.
``GIT_CONFIG_PARAMETERS`` and ``GIT_CONFIG_COUNT`` (the caller's own ``git -c``) are kept: the review's
settings come after them in both and win (:func:`hardened_env`)."""
KEPT_LOCAL = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")


def filter_drivers(cwd: Path, env: dict[str, str]) -> list[str]:
    """Names of the filter drivers git's configuration for ``cwd`` defines (``filter.NAME.*``)."""
    try:
        done = subprocess.run(
            ["git", "config", "-z", "--get-regexp", r"^filter\."],
            cwd=cwd, capture_output=True, encoding="utf-8", errors="surrogateescape", timeout=GIT_TIMEOUT_S,
            check=False, env=env,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return []  # the command itself then fails with the reason
    names = set()
    for entry in done.stdout.split("\0"):
        key = entry.split("\n", 1)[0]
        if key.startswith("filter.") and key.count(".") >= 2:
            names.add(key[len("filter.") : key.rindex(".")])
    return sorted(names)


@functools.cache
def local_env_vars() -> frozenset[str]:
    """:data:`LOCAL_ENV` and what the installed git's ``git rev-parse --local-env-vars`` lists (a newer git
    may name more; asked once a process, outside any repository), less :data:`KEPT_LOCAL`."""
    names = set(LOCAL_ENV)
    env = {k: v for k, v in os.environ.items() if k not in names and k not in DROPPED_ENV}
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--local-env-vars"], cwd="/", capture_output=True, text=True,
            timeout=GIT_TIMEOUT_S, check=False, env=env,
        )  # fmt: skip
        names.update(done.stdout.split() if done.returncode == 0 else ())
    except (OSError, subprocess.TimeoutExpired):
        pass  # no git: the command that needs it says so
    return frozenset(names - set(KEPT_LOCAL))


def hardened_env(cwd: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) for a git command that runs no program of the
    repository's choosing and reads the repository ``cwd`` is in, nothing else: :data:`DROPPED_ENV` and
    :func:`local_env_vars` left out; :data:`SAFE_CONFIG` and every filter driver emptied, given as
    ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` after the ones ``base`` has and appended to its
    ``GIT_CONFIG_PARAMETERS`` (quoted as git quotes them, :func:`_sq`), which git reads last: the caller's
    own ``git -c`` never outranks them (a malformed one of the caller's stops git: nothing runs); no
    transport (``GIT_ALLOW_PROTOCOL`` empty), no lazy fetch (``GIT_NO_LAZY_FETCH``; a git too old to know
    it ignores it), no pager, no editor, no optional locks (a diff does not rewrite the index), no prompt."""
    dropped = set(DROPPED_ENV) | local_env_vars()
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in dropped}
    env["GIT_ALLOW_PROTOCOL"], env["GIT_NO_LAZY_FETCH"] = "", "1"
    count = env.get("GIT_CONFIG_COUNT", "0")
    start = int(count) if count.isdigit() else 0
    pairs = list(SAFE_CONFIG)
    for name in filter_drivers(cwd, env):
        pairs += [(f"filter.{name}.{key}", "") for key in ("clean", "smudge", "process")]
        pairs.append((f"filter.{name}.required", "false"))
    for n, (key, value) in enumerate(pairs, start):
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = key, value
    env["GIT_CONFIG_COUNT"] = str(start + len(pairs))
    given = env.get("GIT_CONFIG_PARAMETERS", "").strip()
    env["GIT_CONFIG_PARAMETERS"] = " ".join(
        [*([given] if given else []), *(f"{_sq(k)}={_sq(v)}" for k, v in pairs)]
    )
    env["GIT_OPTIONAL_LOCKS"], env["GIT_TERMINAL_PROMPT"] = "0", "0"
    env["GIT_PAGER"], env["GIT_EDITOR"] = "cat", ":"  # git's own words for none
    return env


def _sq(text: str) -> str:
    """``text`` as one quoted word of ``GIT_CONFIG_PARAMETERS`` (git's ``sq_quote``: in single quotes, each
    ``'`` and ``!`` written ``'\\''`` and ``'\\!'``), so a name holding ``=`` or a quote stays whole."""
    return "'" + text.replace("'", "'\\''").replace("!", "'\\!'") + "'"


def git(
    args: list[str], cwd: Path, *, stdin: str | None = None, alone: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``git`` (never raises for its exit status; the caller reads ``returncode``), hardened
    (:func:`hardened_env`). ``alone``: treat ``cwd`` as a plain directory even inside some checkout
    (``git apply`` then patches relative to it)."""
    base = {**os.environ, "GIT_CEILING_DIRECTORIES": str(cwd.parent)} if alone else None
    env = hardened_env(cwd, base)
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=GIT_TIMEOUT_S,
            check=False,
            env=env,
        )
    except FileNotFoundError:
        raise ReviewInputError("git is not installed (it is needed to apply the diff)") from None
    except subprocess.TimeoutExpired:
        raise ReviewInputError(f"git {args[0]} took more than {GIT_TIMEOUT_S:g} s in {cwd}") from None


def repo_root(directory: Path, flag: str = "--repo") -> Path:
    """The top of the git checkout holding ``directory``; ReviewInputError naming ``flag`` when there is none."""
    if not directory.is_dir():
        raise ReviewInputError(f"{flag} {directory}: not a directory")
    done = git(["rev-parse", "--show-toplevel"], directory)
    if done.returncode != 0:
        raise ReviewInputError(f"{flag} {directory}: not in a git checkout")
    return Path(done.stdout.strip())


def shown_name(name: str) -> str:
    r"""``name`` (read from git with ``surrogateescape``) as a report, a trace or an error can hold it: each
    byte that is not UTF-8 written ``\xNN``; a UTF-8 name is unchanged."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "no reason given")
    return shown_name(line)


def applies(root: Path, diff: str) -> str:
    """``"forward"`` when the diff applies to the tree at ``root``, ``"applied"`` when the tree already holds
    it (it applies in reverse); else ReviewInputError with git's reason. A diff that applies both ways
    is refused too: which tree is the changed code cannot be told (a line added among repeated lines
    still finds its context in the tree that holds it, and applying it again could cancel it out)."""
    forward = git(["apply", "--check", "--whitespace=nowarn", "-"], root, stdin=diff)
    reverse = git(["apply", "--check", "--reverse", "--whitespace=nowarn", "-"], root, stdin=diff)
    if forward.returncode == 0 and reverse.returncode == 0:
        raise ReviewInputError(
            f"the diff applies to {root} both as it is and in reverse: whether the checkout already holds "
            "the change cannot be told (review a commit range with --base and --head instead)"
        )
    if forward.returncode == 0:
        return "forward"
    if reverse.returncode == 0:
        return "applied"
    raise ReviewInputError(f"the diff does not apply to {root}: {_first_line(forward.stderr)}")


class GitChange(BaseModel):
    """One file ``git apply`` changes, as ``git apply --numstat`` says."""

    path: str = Field(description="The new path (the old one for a deleted file).")
    added: int | None = Field(description="Lines added; None for a binary change.")
    deleted: int | None = Field(description="Lines deleted; None for a binary change.")


def git_changes(root: Path, diff: str) -> list[GitChange]:
    """The files ``git apply`` would change with ``diff``, in order (``git apply --numstat -z``, which
    reads the diff as applying it does, and changes nothing). ReviewInputError with git's reason."""
    done = git(["apply", "--numstat", "-z", "-"], root, stdin=diff)
    if done.returncode != 0:
        raise ReviewInputError(f"git cannot read the diff: {_first_line(done.stderr)}")
    out, fields = [], done.stdout.split("\0")
    for entry in fields[:-1] if fields and fields[-1] == "" else fields:
        added, deleted, path = entry.split("\t", 2)
        numbers = (int(added), int(deleted)) if added.isdigit() and deleted.isdigit() else (None, None)
        out.append(GitChange(path=path, added=numbers[0], deleted=numbers[1]))
    return out


def _described(change: tuple[str, int | None, int | None] | None) -> str:
    return "nothing" if change is None else f"{change[0]!r} (+{change[1]} -{change[2]})"


def check_agreement(files: list[FileDiff], changes: list[GitChange]) -> None:
    """ReviewInputError unless the review's reading of the diff names exactly the files git changes, in
    the same order, with the same numbers of added and deleted lines (a disagreement would let git change
    a file no reviewer saw)."""
    for k in range(max(len(files), len(changes))):
        ours = (files[k].path, files[k].added_lines, files[k].deleted_lines) if k < len(files) else None
        theirs = (changes[k].path, changes[k].added, changes[k].deleted) if k < len(changes) else None
        if ours != theirs:
            raise ReviewInputError(
                f"the review and git read the diff differently: file {k + 1} is {_described(ours)} for the "
                f"review and {_described(theirs)} for git; refusing it (write its headers as git diff does)"
            )


def tracked_files(root: Path) -> list[str]:
    """Files of the checkout (tracked, and untracked ones git does not ignore)."""
    done = git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root)
    if done.returncode != 0:
        raise ReviewInputError(f"cannot list the files of {root}: {_first_line(done.stderr)}")
    return sorted({p for p in done.stdout.split("\0") if p})


def copy_tree(root: Path, files: list[str], dest: Path) -> Path:
    """Copy ``files`` of ``root`` into ``dest`` (created; symlinks kept as links); returns ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for rel in files:
        src = root / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree but still in the index
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(src.readlink())
        elif src.is_file():
            shutil.copy2(src, target)
    return dest


def apply_patch(directory: Path, diff: str) -> None:
    """Apply ``diff`` to the files in ``directory`` with ``git apply``; ReviewInputError with git's reason."""
    done = git(["apply", "--whitespace=nowarn", "-"], directory, stdin=diff, alone=True)
    if done.returncode != 0:
        raise ReviewInputError(f"the diff does not apply to the copy: {_first_line(done.stderr)}")


def checkout_copy(root: Path, dest: Path) -> Path:
    """A copy of the checkout at ``root`` in ``dest`` as it is (:func:`tracked_files`): a range's changed
    tree, which is the head itself (never a diff applied to it)."""
    return copy_tree(root, tracked_files(root), dest)


def changed_copy(root: Path, diff: str, dest: Path) -> Path:
    """A copy of the checkout at ``root`` in ``dest`` with the diff's change in it (applied, unless the tree
    already holds it). ReviewInputError when the diff applies neither way, or both."""
    how = applies(root, diff)
    checkout_copy(root, dest)
    if how == "forward":
        apply_patch(dest, diff)
    return dest


def os_reason(e: OSError, workdir: Path) -> str:
    """What ``e`` says, in one line: the files (relative to ``workdir``) and why (shutil's copy error: its
    first file)."""
    if isinstance(e, shutil.Error) and e.args and isinstance(e.args[0], list) and e.args[0]:
        src, _, why = e.args[0][0]
        text = f"{src}: {why}"
    else:
        names = [os.fsdecode(n) for n in (e.filename, e.filename2) if n is not None]
        text = f"{' -> '.join(names)}: {e.strerror or e}" if names else str(e.strerror or e)
    text = shown_name(text.replace(f"{workdir}/", ""))
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
