"""Issue 11, item 1 through `memdoor serve`: an agent whose candidate breaks the sandbox harness's protocol
(it writes its own frames on the result pipe) only loses its own verdict; the team still answers, with the
other agent's correct code (scripted models drive the control flow; every candidate runs in the real sandbox,
the request goes over real HTTP)."""

from __future__ import annotations

from serve_helpers import ADD_PROMPT, GOOD, client, fenced, running, scripted, user

# Correct results, plus one frame more than the tests: at the last example (add(2, 2), test 1) it sends
# that test's result itself, so the harness's own result comes after the last one. Before issue 11 this
# raised an IndexError out of the sandbox and the request failed with a 502.
HOSTILE = (
    "import json, os, struct, sys\n"
    "def add(a, b):\n"
    "    if (a, b) == (2, 2):\n"
    "        h = json.dumps({'ev': 'res', 'i': 1, 'status': 'ok', 't': 0.0}).encode()\n"
    "        os.write(int(sys.argv[1]), struct.pack('>II', len(h), 1) + h + b'4')\n"
    "    return a + b\n"
)


def test_a_hostile_agents_candidate_does_not_cost_the_team_its_answer(sandbox):
    models = {
        "scripted:hostile": scripted("scripted:hostile", fenced(HOSTILE)),
        "scripted:good": scripted("scripted:good", fenced(GOOD)),
    }
    settings = {"models": ["scripted:hostile", "scripted:good"], "teams": ["memdoor/parallel-2"]}
    with running(models, sandbox, **settings) as srv:
        answer = client(srv).chat.completions.create(model="memdoor/parallel-2", messages=user(ADD_PROMPT))
    assert answer.choices[0].message.content == f"```python\n{GOOD}\n```"
    meta = answer.model_extra["memdoor"]
    assert meta["agent"] == "agent1"
    assert meta["tests"]["status"] == "passed" and meta["tests"]["passed"] == 2
