"""The HTML report as a reader sees it: rendered by headless Chromium (Debian's ``chromium``).

``memdoor report`` writes report.html beside its PNG charts and one page per trace. A page that only
looks right in a text check can still show nothing in a browser (a broken image path, a table the
parser drops), so a real browser loads it here: a probe page in the same directory opens the report in
a frame, counts what the browser built (tables, rows, loaded images with a size, links to trace
pages), follows one trace link, and writes the counts into its own DOM, which Chromium prints.
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from bench_helpers import run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (scripts/test.sh installs Debian's chromium)"
)

PROBE = """<!doctype html><html><body><pre id="out">pending</pre>
<iframe id="report" src="report.html" width="1200" height="900"></iframe>
<iframe id="trace" width="800" height="600"></iframe>
<script>
const out = document.getElementById("out");
document.getElementById("report").addEventListener("load", (e) => {
  const doc = e.target.contentDocument;
  const imgs = [...doc.images];
  const links = [...doc.querySelectorAll('a[href^="traces/"]')].map((a) => a.getAttribute("href"));
  const found = {
    title: doc.title,
    headings: [...doc.querySelectorAll("h2")].map((h) => h.textContent),
    tables: doc.querySelectorAll("table").length,
    rows: doc.querySelectorAll("tbody tr").length,
    images: imgs.length,
    images_drawn: imgs.filter((i) => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100).length,
    trace_links: links.length,
  };
  const trace = document.getElementById("trace");
  trace.addEventListener("load", () => {
    found.trace_text = trace.contentDocument.body.innerText.slice(0, 2000);
    out.textContent = JSON.stringify(found);
  });
  trace.src = links[0];
});
</script></body></html>
"""


def browse(page: Path, screenshot: Path) -> dict:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--allow-file-access-from-files",  # the probe reads its sibling pages' DOM
        f"--user-data-dir={page.parent / '.chromium'}",
        "--virtual-time-budget=20000",
    ]
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout.split('<pre id="out">', 1)[1].split("</pre>", 1)[0]
    assert text != "pending", "the report never finished loading in the browser"
    shot = subprocess.run(
        [
            CHROMIUM,
            *flags,
            "--window-size=1200,2400",
            f"--screenshot={screenshot}",
            page.with_name("report.html").as_uri(),
        ],
        capture_output=True,
        timeout=180,
    )
    assert shot.returncode == 0, shot.stderr[-2000:]
    return json.loads(html.unescape(text))


def test_the_report_renders_in_chromium_with_its_tables_charts_and_trace_links(
    tmp_path, problem_file, answers
):
    out = tmp_path / "out"
    base = ["bench", problem_file, "--model", f"scripted:{answers}", "--out", out, "--limit", "3"]
    assert run_cli(*base, "--strategies", "single,parallel:2").returncode == 0
    assert run_cli("report", out).returncode == 0
    (out / "probe.html").write_text(PROBE, encoding="utf-8")

    found = browse(out / "probe.html", tmp_path / "report.png")

    charts = sorted(p.name for p in out.glob("*.png"))
    assert found["title"] == "Memdoor bench report"
    assert "Problems" in found["headings"] and "Provenance" in found["headings"]
    assert found["tables"] >= 3 and found["rows"] >= 2 + 3  # the rows table and the problem table at least
    assert found["images"] == len(charts) >= 2, (found, charts)
    assert found["images_drawn"] == found["images"], "every chart loads and has a size in the browser"
    assert found["trace_links"] == 6, "one link per (problem, row)"
    assert "final: " in found["trace_text"], "a trace link opens the readable trace"
    assert (tmp_path / "report.png").stat().st_size > 20_000, "the screenshot shows a page, not a blank"
