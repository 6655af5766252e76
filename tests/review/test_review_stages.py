"""The review's stages are checked once (memdoor.review.stages): ``--stages`` on the command line and
``review.stages`` in a server's request give the same order and the same error text, one line; a bad
value is exit 2 there and a 400 here."""

from __future__ import annotations

import pytest

from memdoor.cli import main
from memdoor.review.session import ReviewConfig
from memdoor.review.stages import StageError, stage_order
from memdoor.server.errors import InvalidRequest
from memdoor.server.review import review_options
from memdoor.server.schema import ChatRequest


def _request(stages) -> ChatRequest:
    return ChatRequest.model_validate(
        {
            "model": "memdoor/review-1",
            "messages": [{"role": "user", "content": "x"}],
            "review": {"stages": stages},
        }
    )


def _cli_error(capsys, value: str) -> str:
    assert main(["review", "change.diff", "--stages", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def _serve_error(stages) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as e:
        review_options(_request(stages))
    assert e.value.status == 400 and e.value.param == "review.stages"
    return e.value


@pytest.mark.parametrize(("names", "comma"), [(["tests", "linting"], "tests,linting"), ([], ",")])
def test_a_bad_list_is_the_same_one_line_error_on_the_command_line_and_the_server(capsys, names, comma):
    with pytest.raises(StageError) as e:
        stage_order(names)
    says = str(e.value)
    assert "\n" not in says and "the stages: tests, differential, reading" in says
    assert says in _cli_error(capsys, comma)
    assert _serve_error(names).message == f"review.stages: {says}"


def test_known_names_are_put_in_the_pipelines_order_everywhere():
    assert stage_order(["reading", "tests"]) == ["tests", "reading"]
    assert review_options(_request(["reading", "differential"])).stages == ["differential", "reading"]
    assert ReviewConfig(stages=["reading", "tests"]).stages == ["tests", "reading"]
    assert review_options(_request(None)).stages is None  # not given: the server's default, every stage


def test_an_unknown_name_is_quoted_short_and_braces_are_text():
    long = "x" * 500 + "{0}"
    says = _serve_error([long]).message
    assert "'" + "x" * 40 + "'" in says and "x" * 41 not in says
    assert "{0}" in _serve_error(["{0}"]).message
    assert "review.stages" in _serve_error("tests").message  # not a list: pydantic's own type error
