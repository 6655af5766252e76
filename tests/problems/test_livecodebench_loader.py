import base64
import json
import pickle
import zlib

import pytest

from memdoor.errors import ProblemFormatError
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
