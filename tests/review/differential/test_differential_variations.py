"""Variations of known-good calls: one argument at a time, by its type, in a deterministic order."""

from __future__ import annotations

from differential_helpers import finishes

from memdoor.review.differential.variations import MAX_VARIATIONS, sign_turned, variations, varied_calls


def test_numbers_vary_by_one_to_zero_negated_and_around_the_changed_literals():
    got = variations(7, boundaries=[26])
    assert got[:4] == [8, 6, 0, -7]
    assert {25, 26, 27} <= set(got)  # the changed line's 26 and its neighbours
    assert 7 not in got and len(got) == len(set(got)) <= MAX_VARIATIONS
    assert all(type(v) is float for v in variations(1.5, [3]))  # a float stays a float


def test_strings_vary_by_emptiness_order_case_and_the_changed_lines_words():
    got = variations("three one", boundaries=["four", 3])
    assert {"", "t", "eno eerht", "THREE ONE", "three one "} <= set(got)
    assert {"four", "three one four", "four three one"} <= set(got)  # a changed line's word put in
    assert "three one" not in got


def test_lists_vary_by_length_order_sign_and_one_item():
    got = variations([2, 4, 1])
    for expected in ([], [2], [4, 1], [2, 4], [1, 4, 2], [1, 2, 4], [-2, -4, -1], [2, 2, 4, 1], [3, 4, 1],
                     [2, 4, 2]):  # fmt: skip
        assert expected in got
    assert [2, 4, 1] not in got
    assert variations((1, 2))[:2] == [(), (1,)]  # a tuple stays a tuple
    assert {} in variations({"a": 1}) and {"a": 2} in variations({"a": 1})
    assert set() in variations({1, 2}) and {1, 2, 3} in variations({1, 2})
    assert variations(None) == [] and variations(True) == [False]


def test_deep_nesting_is_varied_two_levels_down_only():
    deep: list = [1]
    for _ in range(300):
        deep = [deep]
    got = finishes(lambda: variations(deep))
    assert 0 < len(got) <= MAX_VARIATIONS


def test_every_kind_of_variation_comes_once_before_repeats_and_the_order_is_fixed():
    calls = [[[1, 2, 3]], [[5, 6]]]
    got = varied_calls(calls)
    assert got == varied_calls(calls)  # deterministic
    assert [[1, 2, 3]] not in got and [[5, 6]] not in got
    first = got[: len(variations([1, 2, 3]))]
    assert [[]] in first and [[6, 5]] in first  # reversed taken from the second call within the first pass
    assert len(got) == len({repr(g) for g in got})


def test_a_turned_sign_is_tried_once_per_argument():
    calls = [[19], [152], [426]]
    got = varied_calls(calls)
    assert len([g for g in got if g[0] in (-19, -152, -426)]) == 1  # a loop down to zero may never end
    assert [20] in got and [151] in got and [427] in got  # the other variations on every call
    assert sign_turned([1, -2], [-1, 2]) and not sign_turned([1, 2], [1, 3]) and not sign_turned(0, -1)


def test_arguments_of_one_kind_are_swapped():
    got = varied_calls([["Jupiter", "Neptune"]])
    assert ["Neptune", "Jupiter"] in got
    got = varied_calls([[3, 4, 5]])
    assert [5, 4, 3] in got and [4, 3, 5] in got
    assert ["a", 1] not in varied_calls([[1, "a"]])  # a number and a string are not swapped
