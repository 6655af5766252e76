"""optillm's approaches as benchmarks/optillm_rows.py benches them: which fit code, which are refused and
why, how ``--approaches`` is read, and the ``openai:`` spec a row's model is reached by (through the metering
relay's port). Shared by the rows (optillm_rows.py) and the running stack (optillm_stack.py)."""

from __future__ import annotations

from memdoor.core.errors import UsageError

REQUEST_TIMEOUT_S = 7200
"""A row's request timeout: an approach makes several calls on a CPU."""

APPROACHES = {
    "none": "the model alone through the proxy (one call, the request's own temperature): the control row",
    "bon": "best of n: 3 samples at temperature 1, the model rates each 0-10, the highest rated is kept",
    "self_consistency": "5 samples at temperature 1, clustered by text similarity, the largest cluster's",
    "moa": "mixture of agents: 3 samples, one critique of all three, one final answer from both",
    "plansearch": "observations, derived observations, a plan in words, then the program (made for code)",
    "rto": "round-trip optimization: code, a description of it, code again from that, a merge of the two",
    "re2": "re-reading: the question repeated in the prompt, one call",
    "cot_reflection": "one call asked for <thinking>, <reflection> and <output>; the output is kept",
    "leap": "principles learned from the examples in the prompt, then an answer that applies them",
    "majority_voting": "8 samples at temperature 0.6, the most frequent normalised answer",
    "genselect": "4 samples at temperature 0.7, the model picks the best in one comparison",
}
"""The approaches that fit code, in the order the rows are printed (the default set)."""

OTHER_APPROACHES = ("mcts", "pvg", "rstar", "z3", "cepo", "mars", "deepthink")
"""Loaded by the pinned install but made for dialogue or mathematics; allowed when named."""

REFUSED = {
    "executecode": "runs the model's code in the proxy's own process, outside any sandbox",
    "coc": "runs the model's code in the proxy's own process, outside any sandbox",
    "web_search": "drives a browser over the network",
    "readurls": "fetches the URLs a prompt names",
    "deep_research": "searches the web",
    "router": "downloads a classifier model from a hub at start",
    "mcp": "starts external tool servers",
}


def parse_approaches(text: str) -> list[str]:
    """``bon,moa`` → ``["bon", "moa"]``; UsageError naming a refused or unknown approach."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError(f"bad --approaches {text!r}: expected a comma-separated list, e.g. bon,moa")
    for name in names:
        if name in REFUSED:
            raise UsageError(f"approach {name!r} is not benched: it {REFUSED[name]}")
        if name not in APPROACHES and name not in OTHER_APPROACHES:
            known = ", ".join([*APPROACHES, *OTHER_APPROACHES])
            raise UsageError(f"unknown optillm approach {name!r} (known: {known})")
    if len(set(names)) != len(names):
        raise UsageError(f"bad --approaches {text!r}: an approach is named twice")
    return names


def proxy_url(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"


def optillm_spec(approach: str, model: str, port: int) -> str:
    """The ``openai:`` spec of one approach: one call in flight on the relay, a long timeout (an approach
    makes several calls on a CPU)."""
    return f"openai:{approach}-{model}@{proxy_url(port)}?concurrency=1&request_timeout_s={REQUEST_TIMEOUT_S}"
