"""Reading a file of the changed copy as a pull request may have shaped it: never through a link.

A diff may add symbolic links (git's mode 120000), to a host file, to ``/proc/self/environ``, to
``/dev/zero`` or to the process's own standard input, and may put files under a linked directory.
So a path of the copy is walked one name at a time from the copy's top, each directory opened with
``O_NOFOLLOW`` relative to its parent: a link anywhere in the path is reported as a link (with its
target text), never followed; only a regular file is opened (``O_NONBLOCK``, so even a FIFO could not
block), and only :data:`MAX_FILE_BYTES` of it are read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pydantic import BaseModel, Field

MAX_FILE_BYTES = 1_000_000
"""The largest file of the changed copy the review reads (bytes); a larger one is skipped, named."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Entry(BaseModel):
    """What is at a path of the copy: a text file's text, or a link's target, or why there is neither."""

    text: str | None = Field(default=None, description="The text of a regular UTF-8 file within the limit.")
    link: str | None = Field(default=None, description="The target text of a symbolic link (never followed).")
    reason: str = Field(default="", description="Why there is no text (empty when there is).")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _read(name: str, dir_fd: int, max_bytes: int) -> Entry:
    """The regular file ``name`` in the directory ``dir_fd`` (not followed if a link)."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(name, dir_fd=dir_fd)
        return Entry(link=target, reason=f"a symbolic link to {target!r} (links are not followed)")
    if not stat.S_ISREG(st.st_mode):
        return Entry(reason=f"{_kind(st.st_mode)}, not a regular file")
    if st.st_size > max_bytes:
        return Entry(reason=f"larger than the review reads ({st.st_size} bytes; the limit is {max_bytes})")
    fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since the stat above
            return Entry(reason="not a regular file")
        chunks, size = [], 0
        while size <= max_bytes and (chunk := os.read(fd, min(65536, max_bytes + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes:
        return Entry(reason=f"larger than the review reads (the limit is {max_bytes} bytes)")
    try:
        return Entry(text=b"".join(chunks).decode("utf-8"))
    except UnicodeDecodeError:
        return Entry(reason="not UTF-8 text")


def inspect(root: Path, rel: str, max_bytes: int = MAX_FILE_BYTES) -> Entry:
    """What is at ``root/rel``, found without following any link in ``rel`` (``root`` itself is trusted)."""
    names = [n for n in rel.split("/") if n not in ("", ".")]
    if not names or ".." in names:
        return Entry(reason="not a path inside the copy")
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as e:
        return Entry(reason=f"the copy cannot be opened ({e.strerror})")
    try:
        for depth, name in enumerate(names[:-1], 1):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            where = "/".join(names[:depth])
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(name, dir_fd=fd)
                return Entry(reason=f"{where} is a symbolic link to {target!r} (links are not followed)")
            if not stat.S_ISDIR(st.st_mode):
                return Entry(reason=f"{where} is not a directory")
            inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
        return _read(names[-1], fd, max_bytes)
    except FileNotFoundError:
        return Entry(reason="missing after the change")
    except OSError as e:
        return Entry(reason=f"cannot be read ({e.strerror})")
    finally:
        os.close(fd)


def read_text(root: Path, rel: str, max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """The text of the regular file ``root/rel`` (None when it is not one, is a link or is too large)."""
    return inspect(root, rel, max_bytes).text
