"""A tiny document model (headings, paragraphs, tables, images) rendered to Markdown and to HTML,
so both report formats always hold the same content."""

from __future__ import annotations

import html
from dataclasses import dataclass, field


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Para:
    text: str


@dataclass(frozen=True)
class Link:
    """A table cell that links somewhere (a relative path)."""

    text: str
    href: str


Cell = str | Link


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Cell]] = field(default_factory=list)


@dataclass
class Image:
    src: str
    alt: str


@dataclass
class Code:
    text: str


Block = Heading | Para | Table | Image | Code


def _md_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f"[{_md_cell(cell.text)}]({cell.href})"
    return cell.replace("|", "\\|").replace("\n", " ")


def _html_cell(cell: Cell) -> str:
    if isinstance(cell, Link):
        return f'<a href="{html.escape(cell.href)}">{html.escape(cell.text)}</a>'
    return html.escape(cell)


def to_markdown(blocks: list[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}")
        elif isinstance(b, Para):
            out.append(b.text)
        elif isinstance(b, Table):
            out.append("| " + " | ".join(_md_cell(h) for h in b.headers) + " |")
            out.append("|" + "|".join("---" for _ in b.headers) + "|")
            out.extend("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows)
        elif isinstance(b, Image):
            out.append(f"![{b.alt}]({b.src})")
        elif isinstance(b, Code):
            out.append("```\n" + b.text + "\n```")
        out.append("")
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f3f3f3}
img{max-width:100%}
pre{background:#f6f6f6;padding:.8em;overflow-x:auto}
"""


def to_html(blocks: list[Block], title: str) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
    ]
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"<h{b.level}>{html.escape(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            out.append(f"<p>{html.escape(b.text)}</p>")
        elif isinstance(b, Table):
            out.append("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in b.headers))
            out.append("</tr></thead><tbody>")
            for row in b.rows:
                out.append("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>")
            out.append("</tbody></table>")
        elif isinstance(b, Image):
            out.append(f'<p><img src="{html.escape(b.src)}" alt="{html.escape(b.alt)}"></p>')
        elif isinstance(b, Code):
            out.append(f"<pre>{html.escape(b.text)}</pre>")
    out.append("</body></html>")
    return "\n".join(out)
