"""Chart labels: short enough to read, never ambiguous."""

from types import SimpleNamespace

from memdoor.bench.charts import chart_labels

SMALL, BIG = "local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b"


def analysis(*rows: tuple[str, list[str]]):
    return SimpleNamespace(rows=[SimpleNamespace(name=n, models=m) for n, m in rows])


def test_model_specs_shrink_to_what_tells_them_apart():
    labels = chart_labels(
        analysis(
            ("parallel:5", [SMALL]),
            (f"cascade:2@{SMALL}*1+{BIG}*1", [SMALL, BIG]),
            (f"parallel:5@{BIG}*1+{SMALL}*4", [BIG, *[SMALL] * 4]),
            (f"single@{BIG}", [BIG]),
        )
    )
    assert labels == {
        "parallel:5": "parallel:5",
        f"cascade:2@{SMALL}*1+{BIG}*1": "cascade:2@0.5b+1.5b",
        f"parallel:5@{BIG}*1+{SMALL}*4": "parallel:5@1.5b+0.5b*4",
        f"single@{BIG}": "single@1.5b",
    }


def test_one_model_keeps_its_name_and_remote_specs_keep_their_scheme():
    assert (
        chart_labels(analysis((f"single@{SMALL}", [SMALL])))[f"single@{SMALL}"] == "single@qwen2.5-coder-0.5b"
    )
    mixed = chart_labels(analysis(("single@openai:gpt-4o", ["openai:gpt-4o"]), (f"single@{SMALL}", [SMALL])))
    assert mixed == {
        "single@openai:gpt-4o": "single@openai:gpt-4o",
        f"single@{SMALL}": "single@qwen2.5-coder-0.5b",
    }


def test_labels_that_would_collide_fall_back_to_full_names():
    rows = (("single@a-x", ["a-x"]), ("single@x", ["a-y"]))  # a-x → x collides with the row literally named x
    assert chart_labels(analysis(*rows)) == {"single@a-x": "single@a-x", "single@x": "single@x"}


def test_points_are_keyed_by_letters_and_the_key_wraps_long_names():
    from memdoor.bench.charts import key_text, point_keys

    names = [f"row{i}" for i in range(28)]
    keys = point_keys(names)
    assert [keys[n] for n in names[:3]] == ["A", "B", "C"]
    assert (keys["row25"], keys["row26"], keys["row27"]) == ("Z", "AA", "AB")
    long = "hybrid:5[inputs=0,repair_when=none_pass,repairer=strong]@1.5b+0.5b*4"
    text = key_text({"x": "A", "y": "B"}, {"x": "single@1.5b", "y": long}, width=30)
    lines = text.splitlines()
    assert lines[0] == "A  single@1.5b" and lines[1].startswith("B  hybrid:5")
    assert len(lines) > 2 and all(line.startswith("   ") for line in lines[2:])
    assert "".join(line[3:] for line in lines[1:]) == long
