"""Harness part 4, the runners: load a candidate once, then run one test of its kind at a time.

``FunctionalRunner`` (LeetCode style calls), ``LcbStdinRunner`` (LiveCodeBench's stdin semantics) and
``PlainStdinRunner`` (a fresh ``__main__`` per test). A fragment of the harness program, never imported:
see ``memdoor.sandbox.harness``."""

# ruff: noqa: F821
# ---- the harness program's text, from the next line on ----


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
