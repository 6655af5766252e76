"""A Python standard-input program runs in a process of its own, as ``python path < input`` would: it ends
as the interpreter ends (its atexit handlers run, a file it left open is flushed as Python flushes it), it
reads its input from descriptor 0 (``os.read(0, ...)``, ``sys.stdin.fileno()``, the FastIO template), and
what one run leaves in its interpreter no later run sees. How it ended it reports on a pipe, after a key: a
program that guesses at that key gets a forged result."""

from __future__ import annotations

import pytest

from memdoor.judging.judge import Judge
from memdoor.review.differential.driver import CallOutcome, outcome, program, program_request
from memdoor.review.differential.execute import Ran, differences, run_version
from memdoor.review.differential.programs import program_of
from memdoor.review.differential.stdin_inputs import stdin_call, stdin_of
from memdoor.review.differential.targets import Batch

HELD = "import os\nout = os.fdopen(1, 'w')\nout.write(input() + '\\n')\n"
"""Its output held in a file it leaves open (flushed when the interpreter lets the module's names go)."""
HELD_KEPT = HELD + "\n\ndef keep():\n    return out\n"
"""The same, the file also kept by a function: part of a reference cycle (the module's names hold the
function, whose globals are those names), which a garbage collection finalizes in no fixed order."""

AT_EXIT = "import atexit, io, sys\nbuf = io.StringIO()\nbuf.write(str(int(input()) + 1) + '\\n')\n"
AT_EXIT += "atexit.register(lambda: sys.stdout.write(buf.getvalue()))\n"

OS_READ = "import os\na, b = map(int, os.read(0, 100).split())\nprint(a + b)\n"
OS_READ_STDIN = OS_READ.replace("import os", "import os, sys").replace("read(0,", "read(sys.stdin.fileno(),")
"""Reading descriptor 0 as ``OS_READ`` does, through ``sys.stdin``'s: the review takes it for a standard-input
program (it names ``sys.stdin``), as it does not a program that reads only ``os.read(0, ...)``."""

FAST_IO = """import os, sys
from io import BytesIO, IOBase

BUFSIZE = 8192


class FastIO(IOBase):
    newlines = 0

    def __init__(self, file):
        self._fd = file.fileno()
        self.buffer = BytesIO()
        self.writable = "x" in file.mode or "r" not in file.mode
        self.write = self.buffer.write if self.writable else None

    def readline(self):
        while self.newlines == 0:
            b = os.read(self._fd, max(os.fstat(self._fd).st_size, BUFSIZE))
            self.newlines = b.count(b"\\n") + (not b)
            ptr = self.buffer.tell()
            self.buffer.seek(0, 2), self.buffer.write(b), self.buffer.seek(ptr)
        self.newlines -= 1
        return self.buffer.readline()

    def flush(self):
        if self.writable:
            os.write(self._fd, self.buffer.getvalue())
            self.buffer.truncate(0), self.buffer.seek(0)


class IOWrapper(IOBase):
    def __init__(self, file):
        self.buffer = FastIO(file)
        self.flush = self.buffer.flush
        self.writable = self.buffer.writable
        self.write = lambda s: self.buffer.write(s.encode("ascii"))
        self.readline = lambda: self.buffer.readline().decode("ascii")


sys.stdin, sys.stdout = IOWrapper(sys.stdin), IOWrapper(sys.stdout)
input = lambda: sys.stdin.readline().rstrip("\\r\\n")


def main():
    a, b = map(int, input().split())
    print(a + b)


if __name__ == "__main__":
    main()
"""
"""PyRival's FastIO template (its input read with ``os.read(sys.stdin.fileno(), ...)``, its output written
at exit by the flush of its ``sys.stdout``), shortened."""


async def program_difference(sandbox, old: str, new: str, stdins: list[str]) -> Ran:
    """The differences of the program ``tool.py`` changed from ``old`` to ``new``, run on ``stdins``."""
    batch = Batch(
        "python",
        program({"tool.py": old}, [""]),
        program({"tool.py": new}, [""]),
        [(0, program_of("tool.py", old, new), [stdin_call(s) for s in stdins])],
        lambda t, c, _k: program_request(t.file, stdin_of(c)),
        outcome,
    )
    (ran,) = await differences(Judge(sandbox), batch)
    return ran


async def runs(sandbox, source: str, stdins: list[str], files: dict[str, str] | None = None) -> list[str]:
    """How the program ``t.py`` (beside ``files``) ran on each of ``stdins``, in words."""
    code = program({"t.py": source, **(files or {})}, [""])
    found: list[CallOutcome] = await run_version(
        Judge(sandbox), code, [program_request("t.py", s) for s in stdins], outcome
    )
    return [o.show() for o in found]


async def test_output_held_in_an_open_file_is_flushed_as_at_the_interpreter_s_exit(sandbox):
    """Python flushes the file when it lets the module's names go; a garbage collection of the cycle
    ``keep`` makes could close its buffer before its text was flushed into it (as it did in 5 runs of 5)."""
    stdins = [f"held{k}\n" for k in range(5)]
    shown = [f"prints 'held{k}\\n' and exits with status 0" for k in range(5)]
    assert await runs(sandbox, HELD, stdins) == shown
    assert await runs(sandbox, HELD_KEPT, stdins) == shown


async def test_a_refactoring_that_keeps_an_open_file_in_a_cycle_is_no_difference(sandbox):
    ran = await program_difference(sandbox, HELD, HELD_KEPT, [f"held{k}\n" for k in range(5)])
    assert ran.reproduced == 0 and not ran.differences, ran


async def test_what_an_atexit_handler_writes_is_output_and_compared(sandbox):
    assert await runs(sandbox, AT_EXIT, ["6\n"]) == ["prints '7\\n' and exits with status 0"]
    ran = await program_difference(sandbox, AT_EXIT, AT_EXIT.replace("+ 1", "+ 2"), ["6\n"])
    assert ran.reproduced == 1
    (d,) = ran.differences
    assert (d.old.text, d.new.text) == ("7\n", "8\n")


@pytest.mark.parametrize(
    "source", [OS_READ, OS_READ_STDIN, FAST_IO], ids=["os.read(0)", "os.read(sys.stdin.fileno())", "FastIO"]
)
async def test_a_program_reads_its_input_from_descriptor_0(sandbox, source):
    assert await runs(sandbox, source, ["3 4\n"]) == ["prints '7\\n' and exits with status 0"]


@pytest.mark.parametrize("source", [OS_READ_STDIN, FAST_IO], ids=["os.read(sys.stdin.fileno())", "FastIO"])
async def test_a_change_behind_a_read_of_descriptor_0_is_a_difference(sandbox, source):
    ran = await program_difference(sandbox, source, source.replace("a + b", "a * b"), ["3 4\n"])
    assert ran.reproduced == 1
    (d,) = ran.differences
    assert (d.old.text, d.new.text) == ("7\n", "12\n")


async def test_standard_input_reads_as_from_a_file_however_it_is_opened(sandbox):
    source = (
        "import os, sys\nfirst = sys.stdin.readline()\n"
        "print(repr(first), sys.stdin.fileno(), sys.stdin.mode, repr(open('/dev/stdin').read()),"
        " repr(os.read(0, 100)), repr(open(0).read()))\n"
    )
    # sys.stdin read ahead (all the file's 6 bytes): os.read(0) and open(0) go on from where it stopped;
    # /dev/stdin opens the input again from its start
    (found,) = await run_version(
        Judge(sandbox), program({"t.py": source}, [""]), [program_request("t.py", "5\n6\n7\n")], outcome
    )
    assert (found.type, found.text) == ("exit status 0", "'5\\n' 0 r '5\\n6\\n7\\n' b'' ''\n")


async def test_what_a_run_leaves_in_its_interpreter_no_later_run_sees(sandbox):
    files = {"counter.py": "count = 0\n"}
    source = "import counter\ncounter.count += 1\nprint(counter.count)\n"
    assert await runs(sandbox, source, ["", ""], files) == ["prints '1\\n' and exits with status 0"] * 2


async def test_how_a_program_s_process_ended_is_its_end(sandbox):
    ends = {
        "import os\nprint(1)\nos._exit(3)\n": "prints '1\\n' and exits with status 3",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n": "runs out of memory",
        "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n": (
            "crashes (its process ended (signal 15))"
        ),
        "print(1)\nraise KeyError('k')\n": "prints '1\\n', then raises KeyError: 'k'",
    }
    for source, shown in ends.items():
        assert await runs(sandbox, source, [""]) == [shown]


async def test_a_program_guessing_its_end_report_s_key_gets_a_forged_result(sandbox):
    guess = (
        "import os\nfor fd in sorted(map(int, os.listdir('/proc/self/fd')))[3:]:\n    try:\n"
        "        os.write(fd, b'\\n' + b'a' * 32 + {said!r})\n"
    )
    guess += "    except OSError:\n        pass\nprint(1)\n"
    said = b" ('exit', 'exit status 0', '')\n"
    assert await runs(sandbox, guess.format(said=said), [""]) == ["crashes (forged result line)"]
    # a line that does not start with a key-shaped value is no report, and no guess
    assert await runs(sandbox, guess.format(said=b"!" + said), [""]) == [
        "prints '1\\n' and exits with status 0"
    ]


async def test_exit_and_quit_end_a_program_as_sys_exit_does(sandbox):
    """The interpreter runs without site (-S), which defines exit() and quit(): a refactoring from
    sys.exit(2) to exit(2) was a NameError on one side, a false difference."""
    old = "import sys\nprint(input())\nsys.exit(2)\n"
    for new in ("print(input())\nexit(2)\n", "print(input())\nquit(2)\n"):
        assert await runs(sandbox, new, ["a\n"]) == ["prints 'a\\n' and exits with status 2"]
        ran = await program_difference(sandbox, old, new, ["a\n", "b\n"])
        assert ran.reproduced == 0 and not ran.differences, ran


async def test_a_program_s_run_ends_when_its_process_does_not_when_a_child_it_forked_does(quick_sandbox):
    """A child the program forks no longer holds the report's pipe open (the run waited for it, and ran out
    of time), nor writes a report of its own (the last report won: the child's exception was the end); it is
    killed when the program's process ends, as the run does."""
    lingers = "import os, time\nif os.fork() == 0:\n    time.sleep(20)\n    os._exit(0)\nprint('parent')\n"
    raises = "import os, time\nif os.fork() == 0:\n    time.sleep(0.3)\n    raise ValueError('child')\nprint('parent')\n"
    for source in (lingers, raises):
        assert await runs(quick_sandbox, source, [""]) == ["prints 'parent\\n' and exits with status 0"]


async def test_a_program_that_closes_descriptors_still_reports_its_end(sandbox):
    """The report's pipe is on a high descriptor, and opened again by its name when the program closed it
    (closerange(3, 1024) made the run exit with status 1)."""
    for top in ("1024", "os.sysconf('SC_OPEN_MAX')"):
        closes = f"import os\nos.closerange(3, {top})\nprint('ok')\n"
        assert await runs(sandbox, closes, [""]) == ["prints 'ok\\n' and exits with status 0"]
        assert await runs(sandbox, closes + "raise KeyError('k')\n", [""]) == [
            "prints 'ok\\n', then raises KeyError: 'k'"
        ]


async def test_what_ends_the_process_after_the_program_s_code_is_its_end(sandbox):
    """The end is reported after the program's atexit handlers (and threads) have run: one that calls
    os._exit(4) ends the process with status 4 (it was reported as status 0)."""
    ends = {
        "import atexit, os\natexit.register(os._exit, 4)\nprint(1)\n": "prints '1\\n' and exits with status 4",
        "import atexit, os\natexit.register(os._exit, 4)\nraise KeyError('k')\n": "prints nothing and exits with status 4",
        "import os, threading, time\n\ndef late():\n    time.sleep(0.2)\n    os._exit(5)\n\n"
        "threading.Thread(target=late).start()\n": "prints nothing and exits with status 5",
        "import atexit\natexit.register(print, 'bye')\nraise KeyError('k')\n": (
            "prints 'bye\\n', then raises KeyError: 'k'"
        ),
    }
    for source, shown in ends.items():
        assert await runs(sandbox, source, [""]) == [shown]


async def test_sys_exit_s_code_is_the_exit_status_python_ends_with(sandbox):
    """An int code (a bool is one) as the C exit() takes it; a code that is no int is printed, status 1."""
    ends = {"True": 1, "256": 0, "-1": 255, "257": 1, "2 ** 64": 255, "False": 0, "None": 0, "'no'": 1}
    for code, status in ends.items():
        assert await runs(sandbox, f"import sys\nsys.exit({code})\n", [""]) == [
            f"prints nothing and exits with status {status}"
        ]
