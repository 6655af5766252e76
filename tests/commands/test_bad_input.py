"""Bad input to every command, as a user gives it: the real CLI in its own process.

Each case must exit 2 with exactly one line on stderr that names the option, file or field at fault,
and no traceback. The table covers every option with a checked value of every command (out of
range, not a number, nan, inf) and every input file a command reads (problems in each format, and
grade's samples): nested too deeply to parse, fields of the wrong type, problems with nothing to
grade, decompression bombs.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import pickle
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "problems.yaml"
DEEP = "[" * 200_000 + "]" * 200_000
"""A JSON value nested 200,000 deep: Python's parser gives up (RecursionError) at about 1,000."""
TESTS = [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]


def lcb_row(**over) -> dict:
    row = {
        "question_id": "q1",
        "question_content": "Add two numbers.",
        "public_test_cases": json.dumps(TESTS),
        "private_test_cases": "[]",
        "metadata": "{}",
    }
    row.update(over)
    return row


def functional(func_name) -> dict:
    tests = [{"input": "1\n2", "output": "3", "testtype": "functional"}]
    return lcb_row(public_test_cases=json.dumps(tests), metadata=json.dumps({"func_name": func_name}))


def zlib_bomb(size: int) -> bytes:
    """``size`` zero bytes, zlib-compressed (about 1,000 times smaller), made without holding them."""
    c = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    parts = [c.compress(chunk) for _ in range(size >> 20)]
    return b"".join(parts) + c.flush()


def gzip_bomb(path: Path, size: int) -> None:
    with gzip.open(path, "wb", compresslevel=9) as f:
        chunk = b"a" * (1 << 20)
        for _ in range(size >> 20):
            f.write(chunk)


def write_files(d: Path) -> dict[str, str]:
    """Every input file the table names, as {placeholder: path}."""
    jsonl = {
        "lcb_no_tests": [lcb_row(public_test_cases="[]")],
        "lcb_func_int": [functional(123)],
        "lcb_func_list": [functional(["add"])],
        "lcb_func_bad_name": [functional("not a name")],
        "lcb_deep_tests": [lcb_row(public_test_cases=DEEP)],
        "lcb_deep_meta": [lcb_row(metadata=DEEP)],
        "lcb_meta_list": [lcb_row(metadata="[1, 2]")],
        "lcb_difficulty_list": [lcb_row(difficulty=["easy"])],
        "lcb_id_object": [lcb_row(question_id={"a": 1})],
        "lcb_content_missing": [{k: v for k, v in lcb_row().items() if k != "question_content"}],
        "lcb_tests_not_list": [lcb_row(public_test_cases='{"input": "1"}')],
        "lcb_test_int_input": [lcb_row(public_test_cases=json.dumps([{"input": 1, "output": "1"}]))],
        "lcb_bomb": [
            lcb_row(
                private_test_cases=base64.b64encode(zlib_bomb(512 << 20)).decode(), public_test_cases="[]"
            )
        ],
        "lcb_pickle_list": [
            lcb_row(private_test_cases=base64.b64encode(zlib.compress(pickle.dumps([TESTS]))).decode())
        ],
        "samples_code_int": [{"problem_id": "second-largest", "code": 123}],
        "samples_no_id": [{"code": "print(1)"}],
        "samples_id_list": [{"problem_id": ["a"], "code": "print(1)"}],
        "humaneval_no_test": [
            {"task_id": "H/0", "prompt": "def f():\n", "entry_point": "f", "test": "   "},
        ],
        "humaneval_entry_point": [
            {"task_id": "H/0", "prompt": "def f():\n", "entry_point": "f()", "test": "def check(c): pass"},
        ],
    }
    paths = {}
    for name, rows in jsonl.items():
        path = d / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths[name] = str(path)
    texts = {
        "deep.jsonl": DEEP + "\n",
        "list_line.jsonl": "[1, 2]\n",
        "empty.jsonl": "\n\n",
        "humaneval_list.jsonl": "[1]\n",
        "user_no_tests.yaml": "id: a\nstatement: Print a number.\n",
        "user_empty_lists.json": '{"id": "a", "statement": "s", "tests": [], "hidden_tests": []}',
        "user_deep.yaml": "id: a\nstatement: s\ntests: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "user_deep.json": '{"id": "a", "statement": "s", "tests": ' + DEEP + "}",
        "user_alias.yaml": "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
        "id: a\nstatement: s\ntests: [{input: '1', output: '1'}]\n",
        "user_difficulty.yaml": "id: a\nstatement: s\ndifficulty: [1]\ntests: [{input: '', output: '1'}]\n",
        "user_date.yaml": "id: a\nstatement: s\nrelease_date: someday\ntests: [{input: '', output: '1'}]\n",
        "user_function.yaml": "id: a\nstatement: s\nfunction: 123\ntests: [{args: [1], expected: 1}]\n",
        "problems.txt": "hello\n",
        "ok_samples.jsonl": json.dumps({"problem_id": "second-largest", "code": "print(1)"}) + "\n",
        "x.json": json.dumps(["```python\nprint(1)\n```"]),
    }
    for name, text in texts.items():
        (d / name).write_text(text)
        paths[name.replace(".", "_")] = str(d / name)
    (d / "latin1.jsonl").write_bytes(b'{"problem_id": "caf\xe9", "code": "x"}\n')
    paths["latin1_jsonl"] = str(d / "latin1.jsonl")
    gzip_bomb(d / "humaneval_bomb.jsonl.gz", 512 << 20)
    paths["humaneval_bomb"] = str(d / "humaneval_bomb.jsonl.gz")
    (d / "traces").mkdir()
    (d / "traces" / "deep.json").write_text(DEEP)
    paths["traces"] = str(d / "traces")
    (d / "emptydir").mkdir()
    paths["emptydir"] = str(d / "emptydir")
    paths["examples"] = str(EXAMPLES)
    paths["out"] = str(d / "out")
    return paths


@dataclass(frozen=True)
class Case:
    argv: str
    """The command line, with {placeholders} for the files of write_files."""
    needle: str
    """Text the one line of stderr must hold (the option, file or field named)."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment variables for the run, with {placeholders} too."""


GRADE = "grade {examples} {ok_samples_jsonl}"
SOLVE = "solve {examples} --problem second-largest --model scripted:{x_json}"
BENCH = "bench {examples} --strategies single --model scripted:{x_json} --out {out}"
SERVE = "serve --port 0 --model scripted:{x_json}"
WORKER = "worker --model scripted:{x_json}"

OPTIONS = [
    # grade
    Case(GRADE + " --workers -1", "--workers: must be at least 0"),
    Case(GRADE + " --workers 5000", "--workers: must be at most 1024"),
    Case(GRADE + " --workers two", "--workers: expected an integer"),
    Case(GRADE + " --timeout 0", "--timeout: must be more than 0"),
    Case(GRADE + " --timeout -5", "--timeout: must be more than 0"),
    Case(GRADE + " --timeout nan", "--timeout: must be a finite number"),
    Case(GRADE + " --timeout inf", "--timeout: must be a finite number"),
    Case(GRADE + " --timeout=-inf", "--timeout: must be a finite number"),
    Case(GRADE + " --timeout 1e300", "--timeout: must be at most"),
    Case(GRADE + " --timeout soon", "--timeout: expected a number"),
    Case(GRADE + " --memory-mb 1", "--memory-mb: must be at least 64"),
    Case(GRADE + " --memory-mb 99999999999", "--memory-mb: must be at most"),
    Case(GRADE + " --memory-mb 1.5", "--memory-mb: expected an integer"),
    Case(GRADE + " --isolation docker", "--isolation: invalid choice"),
    Case("grade {examples}", "required: samples"),
    Case(GRADE + " --surprise", "unrecognized arguments: --surprise"),
    # solve
    Case(SOLVE + " --languages python,cobol", "--languages: unknown language 'cobol'"),
    Case(
        "solve {examples} --problem run-length --model scripted:{x_json} --languages python,rust",
        "only standard-input problems",
    ),
    Case(
        "bench {examples} --strategies parallel:2#python+go --model scripted:{x_json} --out {out}",
        "unknown language 'go'",
    ),
    Case(
        "bench {examples} --strategies parallel:2#python+rust --model scripted:{x_json} --out {out}",
        "only standard-input problems",
    ),
    Case(SOLVE + " --budget-seconds nan", "--budget-seconds: must be a finite number"),
    Case(SOLVE + " --budget-seconds inf", "--budget-seconds: must be a finite number"),
    Case(SOLVE + " --budget-seconds -1", "--budget-seconds: must be more than 0"),
    Case(SOLVE + " --budget-seconds 0", "--budget-seconds: must be more than 0"),
    Case(SOLVE + " --budget-tokens 0", "--budget-tokens: must be at least 1"),
    Case(SOLVE + " --budget-tokens 1e3", "--budget-tokens: expected an integer"),
    Case(SOLVE + " --budget-calls -2", "--budget-calls: must be at least 1"),
    Case(SOLVE + " --agents 0", "--agents: must be at least 1"),
    Case(SOLVE + " --agents 1000", "--agents: must be at most 64"),
    Case(SOLVE + " --strategy parallel:1000", "a team has at most 64 agents"),
    Case(SOLVE + " --strategy parallel:x", "bad strategy 'parallel:x'"),
    Case(SOLVE + " --strategy swarm", "unknown strategy 'swarm'"),
    Case(SOLVE + " --max-tokens 15", "--max-tokens: must be at least 16"),
    Case(SOLVE + " --max-tokens nan", "--max-tokens: expected an integer"),
    Case(SOLVE + " --seed -1", "--seed: must be at least 0"),
    Case(SOLVE + " --seed 99999999999999999999999", "--seed: must be at most"),
    Case(SOLVE + " --vote-k 0", "--vote-k: must be at least 1"),
    Case(SOLVE + " --option rounds", "bad --option 'rounds'"),
    Case(SOLVE + " --model nosuch:x", "bad model spec 'nosuch:x'"),
    Case(SOLVE + " --redis notaurl", "notaurl"),
    Case("solve {examples} --problem nope --model scripted:{x_json}", "no problem 'nope'"),
    # bench
    Case(BENCH + " --limit 0", "--limit: must be at least 1"),
    Case(BENCH + " --budget-tokens -1", "--budget-tokens: must be at least 1"),
    Case(BENCH + " --seed x", "--seed: expected an integer"),
    Case(BENCH + " --max-tokens 0", "--max-tokens: must be at least 16"),
    Case(BENCH + " --concurrency 0", "--concurrency: must be at least 1"),
    Case(BENCH + " --concurrency 100000", "--concurrency: must be at most 1024"),
    Case(BENCH + " --max-errors 0", "--max-errors: must be at least 1"),
    Case(BENCH + " --since 2024-13-01", "bad --since '2024-13-01'"),
    Case(BENCH + " --since 2025-01-01 --until 2024-01-01", "is after --until"),
    Case(BENCH + " --difficulty impossible", "bad --difficulty 'impossible'"),
    Case(BENCH + " --baseline nope", "bad --baseline 'nope'"),
    Case(BENCH + " --strategies single,parallel:500", "a team has at most 64 agents"),
    Case("bench {examples} --strategies single --out {out}", "at least one --model"),
    Case(BENCH.replace("single", "parallel:2@scripted:{x_json}*3"), "the counts add up to 3 agents"),
    Case(BENCH.replace("single", "single@"), "bad --strategies entry 'single@'"),
    Case(BENCH.replace("single", "parallel:2@nosuch:x"), "bad model spec 'nosuch:x'"),
    Case(BENCH.replace("single", "parallel:2@scripted:{x_json}*0+scripted:{x_json}*2"), "at least 1"),
    Case(BENCH + " --budget-compute 0", "--budget-compute: must be more than 0"),
    Case(BENCH + " --budget-compute nan", "--budget-compute: must be a finite number"),
    Case(BENCH + " --budget-compute 1e12", "--budget-compute needs the size of scripted:"),
    Case(BENCH + " --params 7e9", "bad --params '7e9'"),
    Case("report {emptydir} --axis flops", "--axis: invalid choice"),
    Case("report {emptydir} --usd-per-gpu-hour -1", "--usd-per-gpu-hour: must be more than 0"),
    Case("bench {examples} --model scripted:{x_json} --out {out}", "required: --strategies"),
    Case(
        "bench {examples} --strategies single --model scripted:{x_json} --out {examples}",
        "is not a directory",
    ),
    # serve
    Case(SERVE.replace("--port 0", "--port 70000"), "--port: must be at most 65535"),
    Case(SERVE.replace("--port 0", "--port -1"), "--port: must be at least 0"),
    Case(SERVE + " --concurrency 0", "--concurrency: must be at least 1"),
    Case(SERVE + " --max-queue -1", "--max-queue: must be at least 0"),
    Case(SERVE + " --timeout -1", "--timeout: must be at least 0"),
    Case(SERVE + " --timeout nan", "--timeout: must be a finite number"),
    Case(SERVE + " --timeout inf", "--timeout: must be a finite number"),
    Case(SERVE + " --budget-tokens 0", "--budget-tokens: must be at least 1"),
    Case(SERVE + " --max-tokens 8", "--max-tokens: must be at least 16"),
    Case(SERVE + " --test-inputs -1", "--test-inputs: must be at least 0"),
    Case(SERVE + " --test-inputs 1000", "--test-inputs: must be at most 100"),
    Case(SERVE + " --max-body-bytes 10", "--max-body-bytes: must be at least 1024"),
    Case(SERVE + " --seed -5", "--seed: must be at least 0"),
    Case(SERVE + " --team swarm", "--team"),
    Case(SERVE + " --option repair_rounds=3", "bad --option 'repair_rounds=3'"),
    Case(SERVE + " --progress loud", "--progress: invalid choice"),
    Case(SERVE + " --log-level chatty", "--log-level: invalid choice"),
    Case(SERVE + " --host 0.0.0.0", "without a token"),
    # worker
    Case(WORKER + " --concurrency 0", "--concurrency: must be at least 1"),
    Case(WORKER + " --visibility-timeout nan", "--visibility-timeout: must be a finite number"),
    Case(WORKER + " --heartbeat-ttl 0", "--heartbeat-ttl: must be more than 0"),
    Case(WORKER + " --grace -1", "--grace: must be at least 0"),
    Case(WORKER + " --startup-timeout inf", "--startup-timeout: must be a finite number"),
    Case(WORKER + " --agents 0", "--agents: must be at least 1"),
    Case(WORKER + " --max-tokens 1", "--max-tokens: must be at least 16"),
    Case(WORKER + " --max-tasks 0", "--max-tasks: must be at least 1"),
    Case(WORKER + " --budget-seconds nan", "--budget-seconds: must be a finite number"),
    Case(WORKER + " --lease 0", "--lease: must be more than 0"),
    Case(WORKER + " --poll -1", "--poll: must be more than 0"),
    Case(WORKER + " --role boss", "--role: invalid choice"),
    Case(WORKER + " --strategy parallel:500", "a team has at most 64 agents"),
    Case(WORKER + " --redis notaurl", "bad Redis URL 'notaurl'"),
    Case("worker", "worker needs a model"),
    # report, export, trace, models, doctor, and the command itself
    Case("report {emptydir} --resamples 99", "--resamples: must be at least 100"),
    Case("report {emptydir} --resamples 10000000000", "--resamples: must be at most"),
    Case("report {emptydir}", "no bench results here"),
    Case("export {emptydir} --format humaneval --out {out}", "no bench results here"),
    Case("export {emptydir} --format csv --out {out}", "--format: invalid choice"),
    Case("export {emptydir} --format humaneval", "required: --out"),
    Case("trace ../../etc/passwd", "bad trace id"),
    Case("trace abc --dir {emptydir}", "no trace 'abc'"),
    Case("trace abc --redis notaurl", "notaurl"),
    Case("trace deep --dir {traces}", "trace file"),
    Case(SOLVE, "prices are not valid JSON: nested too deeply", env=(("MEMDOOR_PRICES", "{deep_jsonl}"),)),
    Case("models --assemble nosuch", "unknown local model 'nosuch'"),
    Case("doctor --isolation docker", "--isolation: invalid choice"),
    Case("teleport", "invalid choice: 'teleport'"),
]

INPUTS = [
    # problem files, through grade (samples are fine) ...
    Case("grade {lcb_no_tests} {ok_samples_jsonl}", "field 'public_test_cases': no tests"),
    Case(
        "grade {lcb_func_int} {ok_samples_jsonl}", "field 'metadata.func_name': must be a Python identifier"
    ),
    Case("grade {lcb_func_list} {ok_samples_jsonl}", "field 'metadata.func_name'"),
    Case("grade {lcb_func_bad_name} {ok_samples_jsonl}", "field 'metadata.func_name'"),
    Case("grade {deep_jsonl} {ok_samples_jsonl}", "deep.jsonl: line 1: not JSON (nested too deeply)"),
    Case(
        "grade {lcb_deep_tests} {ok_samples_jsonl}", "field 'public_test_cases': not JSON (nested too deeply)"
    ),
    Case(
        "grade {lcb_deep_meta} {ok_samples_jsonl}", "field 'metadata': not a JSON object (nested too deeply)"
    ),
    Case("grade {lcb_meta_list} {ok_samples_jsonl}", "field 'metadata': not a JSON object"),
    Case("grade {lcb_difficulty_list} {ok_samples_jsonl}", "field 'difficulty': must be a string"),
    Case("grade {lcb_id_object} {ok_samples_jsonl}", "field 'question_id': must be a string"),
    Case("grade {lcb_content_missing} {ok_samples_jsonl}", "field 'question_content': missing"),
    Case(
        "grade {lcb_tests_not_list} {ok_samples_jsonl}",
        "field 'public_test_cases': tests must be a JSON list",
    ),
    Case("grade {lcb_test_int_input} {ok_samples_jsonl}", "'input' and 'output' must be strings"),
    Case(
        "grade {lcb_bomb} {ok_samples_jsonl}", "field 'private_test_cases': base64 but decompresses to more"
    ),
    Case("grade {lcb_pickle_list} {ok_samples_jsonl}", "pickle holds more than a plain string"),
    Case("grade {list_line_jsonl} {ok_samples_jsonl}", "line 1: a line must hold a JSON object"),
    Case("grade {empty_jsonl} {ok_samples_jsonl}", "empty.jsonl: no problems in it"),
    Case("grade {humaneval_no_test} {ok_samples_jsonl}", "field 'test': missing, empty"),
    Case(
        "grade {humaneval_entry_point} {ok_samples_jsonl}", "field 'entry_point': must be a Python identifier"
    ),
    Case("grade {humaneval_list_jsonl} {ok_samples_jsonl}", "line 1: a line must hold a JSON object"),
    Case("grade {humaneval_bomb} {ok_samples_jsonl}", "line 1: decompresses to more than"),
    Case("grade {user_no_tests_yaml} {ok_samples_jsonl}", "field 'tests': no tests"),
    Case("grade {user_empty_lists_json} {ok_samples_jsonl}", "field 'tests': no tests"),
    Case("grade {user_deep_yaml} {ok_samples_jsonl}", "not valid YAML: nested too deeply"),
    Case("grade {user_deep_json} {ok_samples_jsonl}", "not valid JSON: nested too deeply"),
    Case("grade {user_alias_yaml} {ok_samples_jsonl}", "aliases (*name) are not allowed"),
    Case("grade {user_difficulty_yaml} {ok_samples_jsonl}", "field 'difficulty': must be text"),
    Case("grade {user_date_yaml} {ok_samples_jsonl}", "field 'release_date'"),
    Case("grade {user_function_yaml} {ok_samples_jsonl}", "field 'function': must be a Python identifier"),
    Case("grade {problems_txt} {ok_samples_jsonl}", "unknown problem file type"),
    Case("grade {emptydir} {ok_samples_jsonl}", "no problem files"),
    Case("grade {emptydir}/nothing.jsonl {ok_samples_jsonl}", "nothing.jsonl: no such file"),
    # ... and through solve and bench, which load them the same way
    Case("solve {lcb_no_tests} --model scripted:{x_json}", "field 'public_test_cases': no tests"),
    Case("solve {user_no_tests_yaml} --model scripted:{x_json}", "field 'tests': no tests"),
    Case("solve {deep_jsonl} --model scripted:{x_json}", "line 1: not JSON (nested too deeply)"),
    Case("solve {lcb_func_int} --model scripted:{x_json}", "field 'metadata.func_name'"),
    Case(
        "bench {lcb_no_tests} --strategies single --model scripted:{x_json} --out {out}",
        "field 'public_test_cases': no tests",
    ),
    Case(
        "bench {user_empty_lists_json} --strategies single --model scripted:{x_json} --out {out}",
        "field 'tests': no tests",
    ),
    # grade's samples
    Case("grade {examples} {deep_jsonl}", "deep.jsonl: line 1: not JSON (nested too deeply)"),
    Case("grade {examples} {list_line_jsonl}", "line 1: a line must hold a JSON object"),
    Case("grade {examples} {empty_jsonl}", "empty.jsonl: no samples in it"),
    Case("grade {examples} {samples_code_int}", "line 1: field 'code': missing or not a string"),
    Case("grade {examples} {samples_no_id}", "line 1: field 'problem_id': missing"),
    Case("grade {examples} {samples_id_list}", "line 1: field 'problem_id': missing"),
    Case("grade {examples} {latin1_jsonl}", "latin1.jsonl: not UTF-8 text"),
    Case("grade {examples} {emptydir}", "cannot read"),
    Case("grade {examples} {emptydir}/none.jsonl", "none.jsonl: cannot read"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    return write_files(tmp_path_factory.mktemp("bad-input"))


def memdoor(argv: list[str], home: Path, extra: dict[str, str]) -> subprocess.CompletedProcess:
    unset = ("REDIS_URL", "MODEL_NAME", "MEMDOOR_SERVE_TOKEN", "MEMDOOR_PRICES")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(extra, MEMDOOR_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "memdoor", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=home,
    )


@pytest.mark.parametrize("case", OPTIONS + INPUTS, ids=lambda c: c.argv.split(" ")[0] + ":" + c.needle[:40])
def test_bad_input_is_one_line_and_exit_2(case, files, tmp_path):
    argv = [part.format(**files) for part in case.argv.split(" ")]
    run = memdoor(argv, tmp_path, {k: v.format(**files) for k, v in case.env})
    lines = run.stderr.splitlines()
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("memdoor: ") and case.needle in lines[0], lines[0]
    assert run.stdout == ""
    assert not Path(files["out"]).exists()  # nothing was created by a refused bench run
