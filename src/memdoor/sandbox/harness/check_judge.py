"""Harness part 7, the judge's side of a check job: run each test's ``check`` outside the program.

``CheckJudge`` runs ``check`` in the harness's own process with stand-ins that call the program's
functions over the link; ``test_line`` finds the test's line of a failure. A fragment of the harness
program, never imported: see ``memdoor.sandbox.harness``."""

# ruff: noqa: F821
# ---- the harness program's text, from the next line on ----


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
