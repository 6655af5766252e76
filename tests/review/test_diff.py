"""Reading unified diffs, and refusing what cannot be reviewed (one-line ReviewInputError)."""

from __future__ import annotations

import pytest

from memdoor.errors import ReviewInputError, UsageError
from memdoor.review.diff import parse_diff

TWO_FILES = """\
diff --git a/a.py b/a.py
index 1..2 100644
--- a/a.py
+++ b/a.py
@@ -1,3 +1,4 @@
 x = 1
-y = 2
+y = 3
+z = 4
 w = 5
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+print(1)
+print(2)
\\ No newline at end of file
"""


def test_files_hunks_and_added_lines():
    a, new = parse_diff(TWO_FILES)
    assert (a.path, a.old_path, a.deleted) == ("a.py", "a.py", False)
    assert a.hunks[0].added() == [2, 3]
    assert a.text.startswith("diff --git a/a.py b/a.py") and "new.py" not in a.text
    assert (new.path, new.old_path) == ("new.py", None)
    assert new.hunks[0].added() == [1, 2]
    assert new.text.startswith("diff --git a/new.py") and new.text.endswith(
        "+print(2)\n\\ No newline at end of file\n"
    )


def test_deleted_file():
    (fd,) = parse_diff("--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n")
    assert fd.deleted and fd.path == "gone.py"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("hello, this is prose\n", "not a unified diff"),
        ("", "not a unified diff"),
        ("--- a/x\n+++ b/x\n", "without a '@@' hunk"),
        ("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n x\n", "ends early"),
        ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n?oops\n", "hunk line"),
        ("diff --git a/i.png b/i.png\nBinary files a/i.png and b/i.png differ\n", "binary diff"),
        ("diff --git a/i.png b/i.png\nGIT binary patch\nliteral 3\n", "binary diff"),
        ("--- a/x\x00\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "NUL"),
        ("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "outside the repository"),
        ("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "outside the repository"),
    ],
)
def test_bad_input_is_one_line(text, says):
    with pytest.raises(ReviewInputError) as e:
        parse_diff(text)
    assert says in str(e.value) and "\n" not in str(e.value)
    assert isinstance(e.value, UsageError) and e.value.exit_code == 2


def test_huge_diff_is_refused_not_truncated():
    text = TWO_FILES * 10
    with pytest.raises(ReviewInputError, match="too large"):
        parse_diff(text, max_bytes=len(TWO_FILES) * 5)
    assert len(parse_diff(TWO_FILES * 2)) == 4
