"""`memdoor grade`: JSON lines in input order, hostile samples do not stop the next ones, bad input exits 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "problems.yaml"
OK = "n=int(input())\ns=sorted(set(map(int,input().split())))\nprint(s[-2] if len(s)>1 else -1)"


def fence(code: str) -> str:
    return f"Here you go:\n```python\n{code}\n```\n"


def grade(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memdoor", "grade", *args], capture_output=True, text=True, timeout=600
    )


def test_json_lines_in_input_order_and_hostile_samples_do_not_stop_grading(tmp_path):
    samples = [
        {"problem_id": "second-largest", "code": fence(OK)},
        {
            "problem_id": "second-largest",
            "code": fence("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)"),
        },
        {"problem_id": "second-largest", "code": fence("while True:\n    print('x' * 100000)")},
        {"problem_id": "second-largest", "code": fence("import os\nwhile True:\n    os.fork()")},
        {"problem_id": "second-largest", "code": "no code block at all"},
        {
            "problem_id": "sum-of-digits",
            "code": fence("def sum_digits(n):\n    return sum(map(int, str(n)))"),
            "extra": "ignored",
        },
        {"problem_id": "sum-of-digits", "completion": "def sum_digits(n):\n    return n % 10\n"},
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    out = grade(str(EXAMPLES), str(path), "--json", "--timeout", "2")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["index"] for r in rows] == list(range(len(samples)))
    assert [r["passed"] for r in rows] == [True, False, False, False, False, True, False]
    assert rows[0]["tests_passed"] == rows[0]["tests_total"] == 6
    assert rows[4]["verdict"] == "compile_error"
    assert set(rows[0]) == {
        "problem_id",
        "index",
        "passed",
        "verdict",
        "tests_passed",
        "tests_total",
        "seconds",
    }


def test_readable_table(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"problem_id": "second-largest", "code": fence(OK)}) + "\n")
    out = grade(str(EXAMPLES), str(path))
    assert out.returncode == 0 and "1/1 samples passed" in out.stdout and "isolation:" in out.stdout


@pytest.mark.parametrize(
    ("samples", "needle"),
    [
        ('{"problem_id": "second-largest", "code": "x"}\n{broken\n', "line 2: not JSON"),
        ('{"code": "x"}\n', "line 1: field 'problem_id': missing"),
        ('{"problem_id": "second-largest"}\n', "field 'code': missing"),
        ('{"problem_id": "nope", "code": "x"}\n', "unknown problems"),
    ],
)
def test_bad_samples_one_line_exit_2(tmp_path, samples, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text(samples)
    out = grade(str(EXAMPLES), str(path), "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert needle in out.stderr and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_bad_problem_file_one_line_exit_2(tmp_path):
    bad = tmp_path / "p.jsonl"
    bad.write_text(
        '{"question_id": "a", "question_content": "x", "public_test_cases": "[]", '
        '"private_test_cases": "!!notbase64!!"}\n'
    )
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"problem_id": "a", "code": "x"}\n')
    out = grade(str(bad), str(samples))
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stderr.count("\n") == 1
    assert f"{bad}: line 1: field 'private_test_cases'" in out.stderr


# Issue 11, item 1: samples that write their own frames on the harness's result pipe (sys.argv[1]).
FORGE = (
    "import json, os, struct, sys\n"
    "def send(head, payload=b''):\n"
    "    h = json.dumps(head).encode()\n"
    "    os.write(int(sys.argv[1]), struct.pack('>II', len(h), len(payload)) + h + payload)\n"
)
LAST = 5  # second-largest: 2 public + 4 hidden tests; its last input starts with "2"
LAST_RESULT = f"send({{'ev': 'res', 'i': {LAST}, 'status': 'ok', 't': 0.0}}, (str(ans) + chr(10)).encode())"
SECOND = "n = int(input())\ns = sorted(set(map(int, input().split())))\nans = s[-2] if len(s) > 1 else -1\nprint(ans)\n"


def test_samples_breaking_the_harness_protocol_get_their_own_verdicts(tmp_path):
    """A result frame more than the tests, a stall before the end, a forged 1,000,000-digit result: each is
    that sample's runtime_error; grading goes on and the other samples keep their verdicts (exit 0)."""
    hostile = {
        "extra frame after the last result": FORGE + SECOND + f"if n == 2:\n    {LAST_RESULT}\n",
        "stall before the end": FORGE
        + SECOND
        + f"if n == 2:\n    {LAST_RESULT}\n    import time\n    time.sleep(60)\n",
        "frame for another test": FORGE
        + "send({'ev': 'res', 'i': 3, 'status': 'ok', 't': 0.0}, b'4')\n"
        + SECOND,
        "end too early": FORGE + "send({'ev': 'end'})\n" + SECOND,
    }
    forged_digits = FORGE + (
        "def sum_digits(n):\n"
        "    send({'ev': 'res', 'i': 0, 'status': 'ok', 't': 0.0}, b'7' * 1000000)\n"
        "    return sum(map(int, str(n)))\n"
    )
    samples = []
    for code in hostile.values():
        samples += [
            {"problem_id": "second-largest", "code": fence(code)},
            {"problem_id": "second-largest", "code": fence(OK)},
        ]
    samples += [
        {"problem_id": "sum-of-digits", "code": fence(forged_digits)},
        {
            "problem_id": "sum-of-digits",
            "code": fence("def sum_digits(n):\n    return sum(map(int, str(n)))"),
        },
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    out = grade(str(EXAMPLES), str(path), "--json", "--timeout", "2", "--workers", "2")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["index"] for r in rows] == list(range(len(samples)))
    assert [r["verdict"] for r in rows] == ["runtime_error", "passed"] * (len(hostile) + 1), rows
    assert rows[0]["tests_passed"] == LAST and rows[2]["tests_passed"] == LAST  # the forged last one fails
    assert all(r["tests_passed"] == r["tests_total"] == 6 for r in rows[1 : 2 * len(hostile) : 2])


def test_a_sample_that_cannot_be_graded_is_reported_and_the_others_keep_their_verdicts(
    tmp_path, monkeypatch, capsys
):
    """Defence in depth: should grading one sample still raise (a bug, simulated here: only the control flow
    is faked, the other samples run in the real sandbox), its line says so and every other line is there."""
    import memdoor.judging.programs
    from memdoor.cli import main

    real_grade = memdoor.judging.programs.grade

    def grade_with_a_bug(problem, code, sandbox, **kw):
        if "# bug" in code:
            raise IndexError("list assignment index out of range")
        return real_grade(problem, code, sandbox, **kw)

    monkeypatch.setattr(memdoor.judging.programs, "grade", grade_with_a_bug)
    samples = [OK, OK + "\n# bug", "print(0)", OK]
    path = tmp_path / "samples.jsonl"
    path.write_text(
        "".join(json.dumps({"problem_id": "second-largest", "code": fence(c)}) + "\n" for c in samples)
    )
    assert main(["grade", str(EXAMPLES), str(path), "--json", "--workers", "2"]) == 1
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["verdict"] for r in rows] == ["passed", "error", "wrong_answer", "passed"]
    assert rows[1]["error"] == "IndexError: list assignment index out of range" and rows[1]["passed"] is False
    assert "error" not in rows[0]
    assert (
        err == "memdoor grade: sample 1 could not be graded: IndexError: list assignment index out of range\n"
    )
