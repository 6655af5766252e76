"""Harness part 3, LiveCodeBench: its stdin programs as its grader transforms and guards them.

``clean_if_name`` and ``make_function`` turn a stdin program into ``wrapped_function`` as
``testing_util`` does; ``lcb_guard`` reproduces what its ``reliability_guard`` changes. A fragment of the
harness program, never imported: see ``memdoor.sandbox.harness``."""

# ruff: noqa: F821
# ---- the harness program's text, from the next line on ----


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
