"""Untrusted text on a line of Markdown: rendered (CommonMark), it is the text itself, with no element of
its own."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from memdoor.review.mdescape import code, escape

HOSTILE = [
    "](http://evil)<img src=x onerror=alert(1)>\n# heading",
    "[click](javascript:alert(1)) ![x](http://evil/x.png) <b>bold</b> &lt;",
    "*em* _em_ ~~gone~~ `code` \\[not escaped\\]\r# heading\r\n- item",
]


def _inline_tokens(md: str) -> list[str]:
    (para_open, inline, para_close) = MarkdownIt("commonmark").parse(md)
    assert (para_open.type, para_close.type) == ("paragraph_open", "paragraph_close")  # one paragraph
    return [t.type for t in inline.children or []]


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_as_itself_on_one_line(text):
    md = f"- finding — {escape(text)}"
    assert "\n" not in md and "\r" not in md
    html = MarkdownIt("commonmark").render(md)
    shown = html.removeprefix("<ul>\n<li>finding — ").removesuffix("</li>\n</ul>\n")
    expected = " ".join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    assert shown == expected.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert set(_inline_tokens(escape(text))) == {"text"}


def test_bare_addresses_are_not_left_to_a_renderers_autolinks():
    assert escape("see http://evil and WWW.evil.com") == "see http\\://evil and WWW\\.evil.com"


def test_a_name_is_one_code_span():
    assert _inline_tokens(code("a`b\n# c")) == ["code_inline"]
