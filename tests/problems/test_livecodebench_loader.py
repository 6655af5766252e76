import base64
import json
import pickle
import zlib

import pytest

from memdoor.core.errors import ProblemFormatError
from memdoor.problems.livecodebench import decode_tests, load_jsonl
from memdoor.problems.load import load_problems

TESTS = [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]


def compressed(obj) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(obj)))).decode()


def row(**over):
    r = {
        "question_title": "sum",
        "question_content": "Add two numbers.",
        "platform": "atcoder",
        "question_id": "abc001_a",
        "contest_id": "abc001",
        "contest_date": "2024-05-04T00:00:00",
        "starter_code": "",
        "difficulty": "easy",
        "public_test_cases": json.dumps(TESTS),
        "private_test_cases": compressed(TESTS * 2),
        "metadata": "{}",
    }
    r.update(over)
    return r


def write(tmp_path, rows, name="p.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_plain_and_compressed_tests_decode(tmp_path):
    [p] = load_jsonl(write(tmp_path, [row()]))
    assert p.id == "abc001_a" and p.kind == "stdin" and p.prelude == "livecodebench"
    assert len(p.public_tests) == 1 and len(p.hidden_tests) == 2
    assert p.hidden_tests[0].output == "3\n"
    assert str(p.release_date) == "2024-05-04" and p.difficulty == "easy"
    assert p.public_view().hidden_tests == [] and len(p.hidden_tests) == 2


def test_functional_needs_func_name(tmp_path):
    f = [{"input": "[1]\n2", "output": "3", "testtype": "functional"}]
    [p] = load_jsonl(
        write(
            tmp_path,
            [
                row(
                    public_test_cases=json.dumps(f),
                    private_test_cases="[]",
                    metadata=json.dumps({"func_name": "add"}),
                )
            ],
        )
    )
    assert p.kind == "functional" and p.func_name == "add"
    with pytest.raises(ProblemFormatError, match="func_name"):
        load_jsonl(write(tmp_path, [row(public_test_cases=json.dumps(f), private_test_cases="[]")]))


@pytest.mark.parametrize(
    ("bad", "field", "reason"),
    [
        ({"private_test_cases": base64.b64encode(b"not zlib at all").decode()}, "private_test_cases", "zlib"),
        ({"private_test_cases": "%%% not base64 %%%"}, "private_test_cases", "neither JSON nor base64"),
        (
            {"private_test_cases": base64.b64encode(zlib.compress(pickle.dumps(["a list"]))).decode()},
            "private_test_cases",
            "more than a plain string",
        ),
        (
            {"public_test_cases": json.dumps([{"input": "", "output": "", "testtype": "interactive"}])},
            "public_test_cases[0].testtype",
            "unknown test type",
        ),
        ({"metadata": "{nope"}, "metadata", "not a JSON object"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path, bad, field, reason):
    path = write(tmp_path, [row(question_id="ok1"), row(**bad)])
    with pytest.raises(ProblemFormatError) as e:
        load_jsonl(path)
    msg = str(e.value)
    assert str(path) in msg and "line 2" in msg and repr(field) in msg and reason in msg
    assert "\n" not in msg


def test_missing_field_and_not_json(tmp_path):
    r = row()
    del r["question_content"]
    with pytest.raises(ProblemFormatError, match="line 1: field 'question_content': missing"):
        load_jsonl(write(tmp_path, [r]))
    with pytest.raises(ProblemFormatError, match="line 2: not JSON"):
        load_jsonl(write(tmp_path, [row(), "{broken"]))


def test_pickle_of_arbitrary_object_is_never_unpickled(tmp_path):
    class Boom:
        def __reduce__(self):
            return (print, ("executed!",))

    payload = base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()
    with pytest.raises(ValueError, match="more than a plain string"):
        decode_tests(payload)


def test_duplicate_ids_refused(tmp_path):
    with pytest.raises(ProblemFormatError, match="duplicate problem id"):
        load_problems(write(tmp_path, [row(), row()]))


@pytest.mark.parametrize(
    "name", ["leetcode_2024_dev.jsonl", "apps_stdin_dev.jsonl", "lcb_v5_public_only_dev.jsonl"]
)
def test_every_shared_problem_file_loads(shared_data, name):
    problems = load_problems(shared_data / name)
    assert problems and all(p.statement and (p.public_tests or p.hidden_tests) for p in problems)
    if name == "leetcode_2024_dev.jsonl":
        assert len(problems) == 190 and all(p.kind == "functional" and p.func_name for p in problems)
        assert sum(len(p.hidden_tests) for p in problems) > 10_000
    if name == "apps_stdin_dev.jsonl":
        assert all(p.kind == "stdin" for p in problems)


def zlib_bomb(size: int) -> bytes:
    """``size`` zero bytes zlib-compressed (about 1,000 times smaller), made without holding them."""
    c = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    return b"".join(c.compress(chunk) for _ in range(size >> 20)) + c.flush()


PEAK = """
import resource, sys
from memdoor.core.errors import ProblemFormatError
from memdoor.problems.livecodebench import load_jsonl
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load_jsonl(sys.argv[1])
except ProblemFormatError as e:
    print(str(e))
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""


def test_a_decompression_bomb_is_refused_before_it_expands(tmp_path):
    """545 KB of zlib claiming 560 MB: refused once the output reaches the cap, in a fresh process
    whose peak memory shows the rest was never produced."""
    import subprocess
    import sys

    from memdoor.problems.inflate import MIN_LIMIT

    bomb = zlib_bomb(560 << 20)
    assert len(bomb) < 600_000
    path = write(tmp_path, [row(private_test_cases=base64.b64encode(bomb).decode())])
    run = subprocess.run(
        [sys.executable, "-c", PEAK, str(path)], capture_output=True, text=True, timeout=300, check=True
    )
    message, grown_mb = run.stdout.strip().splitlines()
    assert (
        f"{path}: line 1: field 'private_test_cases': base64 but decompresses to more than 64 MiB" in message
    )
    assert int(grown_mb) < 3 * (MIN_LIMIT >> 20)  # the cap and its copies, not the 560 MB claimed


def test_decompression_limits():
    from memdoor.problems.inflate import inflate, limit_for

    data = zlib.compress(b"x" * 1000)
    assert inflate(data, limit=1000) == b"x" * 1000  # exactly the limit is fine
    with pytest.raises(ValueError, match="decompresses to more than"):
        inflate(data, limit=999)
    with pytest.raises(ValueError, match="truncated"):
        inflate(data[:-4])
    with pytest.raises(ValueError, match="not zlib"):
        inflate(b"plain bytes")
    assert limit_for(1) == 64 << 20 and limit_for(10 << 20) == 1000 << 20 and limit_for(1 << 40) == 1 << 30


def test_a_compressed_field_holding_a_pickled_string_within_the_limit_loads(tmp_path):
    big = [{"input": "7 " * 50_000 + "\n", "output": "ok\n", "testtype": "stdin"}] * 40
    [p] = load_jsonl(write(tmp_path, [row(private_test_cases=compressed(big))]))
    assert len(p.hidden_tests) == 40 and p.hidden_tests[0].input.startswith("7 7")


def test_deep_and_mistyped_fields_name_the_field(tmp_path):
    deep = "[" * 200_000 + "]" * 200_000
    cases = [
        (row(public_test_cases=deep), "'public_test_cases': not JSON (nested too deeply)"),
        (row(metadata=deep), "'metadata': not a JSON object (nested too deeply)"),
        (row(metadata=json.dumps({"func_name": 123})), "'metadata.func_name': must be a Python identifier"),
        (row(metadata=json.dumps({"func_name": ["f"]})), "'metadata.func_name': must be a Python identifier"),
        (row(platform={"x": 1}), "'platform': must be a string"),
        (row(public_test_cases="[]", private_test_cases="[]"), "'public_test_cases': no tests"),
    ]
    for bad, needle in cases:
        with pytest.raises(ProblemFormatError) as e:
            load_jsonl(write(tmp_path, [bad]))
        assert needle in str(e.value) and "\n" not in str(e.value)
    path = tmp_path / "deep.jsonl"
    path.write_text(deep + "\n")
    with pytest.raises(ProblemFormatError, match="line 1: not JSON \\(nested too deeply\\)"):
        load_jsonl(path)


def test_a_pickle_bigger_than_a_string_is_refused_without_listing_its_opcodes():
    from memdoor.problems.safepickle import MAX_OPCODES, loads_str

    many = b"\x80\x04" + b"\x94" * 10_000_000 + b"."  # protocol 4, then ten million MEMOIZE
    with pytest.raises(ValueError, match=f"over {MAX_OPCODES} opcodes"):
        loads_str(many)
