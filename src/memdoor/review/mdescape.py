"""Untrusted text inside a line of Markdown, shown as it is: never a link, an image, raw HTML, emphasis or
code, and never a line of its own (a heading, a list item, a fence).

Line breaks become spaces, so the text stays on the line it was put on (after a prefix such as ``- ``);
``&``, ``<`` and ``>`` become character references, so no HTML tag or ``<http://…>`` autolink can start;
the characters that open links, images, emphasis and code spans (`` \\ ` * _ ~ [ ] ``) are escaped with a
backslash, and so are the ``:`` of ``://`` and the ``.`` of ``www.``, which a renderer such as GitHub's would
otherwise make a link of. A name (a path, a test, a command) is a code span on one line (:func:`code`);
longer text that must keep its lines goes in a fence (:func:`memdoor.review.fence.fence`).
"""

from __future__ import annotations

import re

from memdoor.review.fence import inline

LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""What ends a line in Markdown (CommonMark): a line feed, a carriage return, or both."""
_SPECIAL = re.compile(r"[\\`*_~\[\]]|:(?=//)|(?<=www)\.", re.IGNORECASE)
_REFERENCES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def escape(text: str) -> str:
    """``text`` as inert Markdown on one line (see the module)."""
    one_line = LINE_BREAK.sub(" ", text)
    referenced = re.sub(r"[&<>]", lambda m: _REFERENCES[m.group()], one_line)
    return _SPECIAL.sub(lambda m: "\\" + m.group(), referenced)


def code(name: str) -> str:
    """``name`` as a code span on one line: shown as it is, whatever backticks or line breaks it holds."""
    return inline(LINE_BREAK.sub(" ", name))
