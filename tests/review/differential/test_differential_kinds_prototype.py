"""An instance method named apart from a static one of its name (``X.prototype.m``) is a target the
differential stage keeps, and the base's tests give it their calls, like any instance method."""

from __future__ import annotations

from memdoor.review.differential.kinds import _IDENTIFIER, _mined_js

TESTS = ["const s = new Scale();\nassert.equal(s.of(4), 40);\nassert.equal(Scale.of(4), 8);\n"]


def test_an_instance_method_named_with_prototype_is_a_plain_name():
    assert _IDENTIFIER.match("Scale.prototype.of")
    assert _IDENTIFIER.match("Scale.of") and _IDENTIFIER.match("of")
    assert not _IDENTIFIER.match("a.b.c")


def test_its_calls_are_mined_from_tests_that_name_its_class():
    calls = [c.text for c in _mined_js(TESTS, "Scale.prototype.of", "method")]
    assert calls and all("4" in c for c in calls)
    assert [c.text for c in _mined_js(TESTS, "Scale.of", "staticmethod")] == ["[4]"]
