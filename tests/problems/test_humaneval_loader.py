from memdoor.problems.humaneval import docstring_examples
from memdoor.problems.load import load_problems


def test_humaneval_ships_164_problems_with_check_as_hidden_test():
    problems = load_problems("humaneval")
    assert len(problems) == 164
    p = problems[0]
    assert p.id == "HumanEval/0" and p.func_name == "has_close_elements"
    assert [t.kind for t in p.hidden_tests] == ["check"] and "def check(candidate)" in p.hidden_tests[0].input
    assert p.grading_prefix == p.statement
    assert p.graded_on == "hidden" and p.grading_tests == p.hidden_tests  # check() alone, as officially
    # docstring examples become public tests, and most problems have some
    assert [t.output for t in p.public_tests] == ["false", "true"]
    assert sum(bool(q.public_tests) for q in problems) > 100


def test_docstring_example_styles():
    prompt = '''def f(x, y):
    """
    >>> f(1, [2])
    [1, 2]
    >>> sorted(f(1, 2))
    [1, 2]
    f(3, 4) ==> (3, 4)
    f("a", "b") ➞ 'ab'
    For f(0) the answer is 0
    """
'''
    tests = docstring_examples(prompt, "f")
    assert [(t.input, t.output) for t in tests] == [
        ("1\n[2]", "[1, 2]"),
        ("3\n4", "[3, 4]"),
        ('"a"\n"b"', '"ab"'),
    ]
