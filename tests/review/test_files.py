"""Reading the changed copy never follows a link: real links (to a host file, /proc, devices, standard
input), a linked directory, a FIFO and an oversized file, each reported as what it is, without hanging."""

from __future__ import annotations

import os

import pytest

from memdoor.review.files import inspect, read_text


@pytest.fixture
def copy(tmp_path):
    root = tmp_path / "copy"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "ok.py").write_text("x = 1\n")
    return root


@pytest.mark.parametrize("target", ["/etc/hostname", "/proc/self/environ", "/dev/zero", "/proc/self/fd/0"])
def test_a_link_is_a_link_with_its_target_text_never_its_contents(copy, target):
    os.symlink(target, copy / "leak")
    entry = inspect(copy, "leak")
    assert entry.text is None and entry.link == target and "not followed" in entry.reason
    assert read_text(copy, "leak") is None


def test_a_linked_directory_is_not_walked_through(copy, tmp_path):
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "passwd").write_text("root:CANARY\n")
    os.symlink(secret, copy / "src")
    entry = inspect(copy, "src/passwd")
    assert entry.text is None and entry.link is None
    assert entry.reason == f"src is a symbolic link to {str(secret)!r} (links are not followed)"
    os.symlink("pkg", copy / "alias")  # even a link that stays inside the copy
    assert inspect(copy, "alias/ok.py").text is None and inspect(copy, "pkg/ok.py").text == "x = 1\n"


def test_only_regular_files_of_bounded_size_are_read(copy):
    os.mkfifo(copy / "pipe")  # opening a FIFO for reading would block until a writer comes
    assert inspect(copy, "pipe").reason == "a FIFO, not a regular file"
    assert inspect(copy, "pkg").reason == "a directory, not a regular file"
    (copy / "big.py").write_text("x" * 2000)
    assert "the limit is 1000" in inspect(copy, "big.py", max_bytes=1000).reason
    (copy / "bin.py").write_bytes(b"\xff\xfe")
    assert inspect(copy, "bin.py").reason == "not UTF-8 text"
    assert inspect(copy, "gone.py").reason == "missing after the change"
    assert inspect(copy, "pkg/ok.py/x").reason == "pkg/ok.py is not a directory"
