"""The change's description, the review's specification: ``--description TEXT`` or ``@FILE``, and the
commit messages of the range a review reads (:mod:`memdoor.review.gitrange`).

All of it is untrusted text (a pull request's body, its commits): it is bounded here, and fenced as
data wherever it enters a prompt. A description over :data:`MAX_DESCRIPTION_CHARS` is refused (one
line, exit 2) rather than cut: a cut could drop the very sentence that says what the change intends.
Commit messages are cut instead (:data:`MAX_MESSAGES_CHARS`): a long history must not stop a review.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memdoor.core.errors import ReviewInputError

MAX_DESCRIPTION_CHARS = 65_536
"""Longest description accepted, in characters (a GitHub pull request's body is at most this long)."""
MAX_DESCRIPTION_FILE_BYTES = 4 * MAX_DESCRIPTION_CHARS
"""Largest ``@FILE`` read (UTF-8 takes at most 4 bytes a character); the file is never read further."""
MAX_MESSAGES_CHARS = 16_000
"""Commit messages kept of a range, in characters (the rest is cut, and the cut said)."""
MESSAGES_HEADING = "Commit messages of {range}:"


def check_description(text: str | None, where: str = "--description") -> str | None:
    """``text`` without surrounding blank space; None when empty. ReviewInputError when too long."""
    if text is None or not text.strip():
        return None
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise ReviewInputError(
            f"{where}: {len(text):,} characters; a description takes at most {MAX_DESCRIPTION_CHARS:,}"
        )
    return text.strip()


def read_description(value: str | None) -> str | None:
    """``--description``'s value: the text itself, or ``@FILE``'s contents (UTF-8, read up to the cap).
    None for no (or an empty) description; ReviewInputError for a file that cannot be read, is not a
    regular file (a FIFO, a device), is not UTF-8 text, or is too long. Untrusted text (a pull
    request's body) belongs in a file: as TEXT, a body starting with ``@`` would name a file."""
    if value is None or not value.startswith("@"):
        return check_description(value)
    try:  # non-blocking: a FIFO must not hang the review; only a regular file is read
        fd = os.open(Path(value[1:]), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise ReviewInputError(f"--description {value}: cannot read it: {e.strerror or e}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ReviewInputError(f"--description {value}: not a regular file")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_DESCRIPTION_FILE_BYTES + 1)
        except OSError as e:
            raise ReviewInputError(f"--description {value}: cannot read it: {e.strerror or e}") from None
    if len(data) > MAX_DESCRIPTION_FILE_BYTES:
        raise ReviewInputError(
            f"--description {value}: larger than {MAX_DESCRIPTION_FILE_BYTES:,} bytes; "
            f"a description takes at most {MAX_DESCRIPTION_CHARS:,} characters"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReviewInputError(f"--description {value}: not UTF-8 text") from None
    return check_description(text, f"--description {value}")


def cut_messages(messages: list[str], limit: int = MAX_MESSAGES_CHARS) -> str:
    """Commit messages, oldest first, one blank line between them, cut at ``limit`` characters."""
    text = "\n\n".join(m.strip() for m in messages if m.strip())
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n[… cut: {len(text) - limit:,} more characters of commit messages]"


def messages_block(messages: str, range_name: str) -> str | None:
    """The range's commit messages under their heading (None when there are none). Kept apart from the
    user's description: only the description may say the change is a refactoring."""
    if not messages.strip():
        return None
    return f"{MESSAGES_HEADING.format(range=range_name)}\n{messages.strip()}"
