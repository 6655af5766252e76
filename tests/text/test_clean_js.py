"""Top-level console calls after a JavaScript function answer go; anything they could matter to, and
anything the scanner cannot follow, stays."""

from __future__ import annotations

from memdoor.text.clean_js import drop_console_lines

ROLLING = """\
const rollingMax = (numbers) => {
  let best = -Infinity;
  const out = [];
  for (const n of numbers) {
    best = Math.max(best, n);
    console.debug(best);
    out.push(best);
  }
  return out;
};"""


def test_example_calls_and_their_comments_go():
    answer = (
        ROLLING
        + """

// Test cases
console.log(rollingMax([1, 2, 3, 2])); // Output: [1, 2, 3, 3]
console.log(JSON.stringify(rollingMax([])))
console.assert(
  rollingMax([5]).length === 1,
  'one'
);
// Output: []
"""
    )
    assert drop_console_lines(answer, "rollingMax") == ROLLING + "\n"


def test_calls_inside_functions_loops_and_branch_bodies_stay():
    loop = ROLLING + "\nfor (const t of [[1], [2]]) {\n  console.log(rollingMax(t));\n}"
    assert drop_console_lines(loop, "rollingMax") == loop
    for head in ("if (process.env.DEBUG)", "else", "while (false)"):
        code = ROLLING + f"\n{head}\nconsole.log(rollingMax([1]));"
        assert drop_console_lines(code, "rollingMax") == code, head


def test_a_call_that_could_change_state_stays():
    kept = [
        "console.log(cache.push(1));",
        "console.log(limit = 3);",
        "console.log(counter++);",
        "console.log(setUp());",  # not defined in the answer: it may be anything
        "console.log(Object.assign(config, {a: 1}));",
        "console.log(await rollingMax([1]));",
    ]
    for line in kept:
        code = f"{ROLLING}\n{line}"
        assert drop_console_lines(code, "rollingMax") == code, line
    helper = (
        ROLLING + "\nfunction twice(x) { return 2 * x; }\nconsole.log(twice(rollingMax([1])[0]), String(1));"
    )
    assert drop_console_lines(helper, "rollingMax") == ROLLING + "\nfunction twice(x) { return 2 * x; }"


def test_a_line_that_continues_the_statement_above_or_shares_its_line_or_a_comment_stays():
    for code in (
        ROLLING + "\nconst shown = 1 +\nconsole.log(rollingMax([1]));",
        ROLLING + "\nconsole.log(rollingMax([1])); rollingMax([2]);",
        ROLLING + " console.log(rollingMax([1]));",
        ROLLING + "\nconsole.log(rollingMax([1])); /* prints\n[1] */",
        ROLLING + "\n/* the example\n*/ console.log(rollingMax([1]));",
    ):
        assert drop_console_lines(code, "rollingMax") == code


def test_strings_comments_templates_and_regexes_are_followed():
    text = (
        ROLLING
        + "\nconst help = `usage:\nconsole.log(rollingMax([1]));\n${[1].map((x) => `${x}`).join('}')}`;"
        + "\n/*\nconsole.log(rollingMax([2]));\n*/"
        + "\nconst re = /[\"'(`]/g;\nconst half = 1 / 2; // a ' quote\nconsole.log(rollingMax([3]).length / 2);"
    )
    kept = text.rsplit("\n", 1)[0]
    assert drop_console_lines(text, "rollingMax") == kept


def test_code_the_scanner_cannot_follow_or_only_console_lines_stay_whole():
    broken = ROLLING + "\nconsole.log(rollingMax(['unclosed]));"
    assert drop_console_lines(broken, "rollingMax") == broken
    unbalanced = ROLLING + "\n}\nconsole.log(rollingMax([1]));"
    assert drop_console_lines(unbalanced, "rollingMax") == unbalanced
    only = "// demo\nconsole.log(1);\n"
    assert drop_console_lines(only, "f") == only
    plain = ROLLING + "\n"
    assert drop_console_lines(plain, "rollingMax") == plain
