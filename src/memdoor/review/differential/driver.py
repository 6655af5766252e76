"""The program that runs one version's functions in the sandbox, and what it reports for each call.

The sandbox runs it as a standard-input program (the candidates' harness, their isolation and limits,
one wall-clock limit per call). It carries the version's Python files (:mod:`.trees`), writes them once
into the sandbox's private ``/tmp`` (a folder named by their digest), and for each test reads one request on standard input — module,
function, the argument list's literal text, after the line of the nonce (:mod:`.seal`) — imports the
module from there, reads the arguments with ``ast.literal_eval``, calls the function (a method on an
instance made without arguments), and prints one line: :data:`MARK`, the nonce, then JSON
``{"k": "return"|"raise"|"import", "t": type, "r": text, "h": digest}``
(plus ``"a"``/``"ah"`` when the call changed its arguments; and, only for a method whose call changed its
instance's own attributes, ``"s"``/``"sh"`` those after the call, sorted by name, a list or dict met again
inside them ``[Circular]``, and ``"sb"`` before it). Values are written as ``repr`` with sets
sorted, iterators drained (up to a bound) and memory addresses blanked, so two runs of the same code
print the same; the digest is of the whole text, the text itself is cut. A value nested deeper than 40
levels is written ``...#`` and a digest of its whole (walked without recursion, :data:`MAX_NODES` values
at most), so two that differ only down there still differ. The line is UTF-8 of at most
:data:`MAX_LINE` characters (the sandbox keeps 4,096 of the output): a long type is cut with its digest
after, long shown texts are cut further (their digests are compared). What the function prints and
reads is its own (standard input empty, output discarded). A standard-input program runs as
``python path < input`` would, in a Python process of its own for each run (:data:`CHILD`; ``-u``, the calls'
flags and hash seed): its input is a file on descriptor 0 (``sys.stdin``, ``sys.stdin.fileno()``,
``os.read(0, ...)``, ``open(0)``; ``/dev/stdin`` reads it again from its start), its output all it writes to
descriptor 1 (``print``, ``os.write(1, ...)``, ``open(1)``, ``/dev/stdout``, a child process's), another file
without a name, read once the process has ended. It ends as the interpreter ends (its threads waited for, its
``atexit`` handlers run, ``sys.stdout`` flushed, its module's names let go: a file it left open is flushed as
Python flushes it), and what one run leaves in its interpreter (a module's state, the recursion limit) no
other run sees. How its code ended that process reports on a pipe, in a line after a key it wrote there
before any code under test ran (a line with another key-shaped value is a guess at it: a forged result),
from the atexit handler that runs last (after the program's threads and handlers), on a high descriptor
that a child it forks closes (it opens the pipe again by name if the program closed it); without that line
its exit status says (``os._exit``, an atexit handler's; the status is Python's: an exception's 1,
``sys.exit(code)``'s as the C ``exit()`` takes it), and killed as the kernel kills a group out of memory it
ran out of memory. The run ends when that process ends: children it left running are killed. A program
that reads its process's memory (its frames) could still write that line.
A module that fails to load (it does not parse, a module it imports is missing), and a call or program that
meets the import system's ModuleNotFoundError (an ``import`` statement, or ``importlib.import_module``,
finding no module: one the sandbox lacks), is ``import``: the code cannot run here, which is no behaviour.
An ImportError the code raises itself is raised like any other exception, and compared.
A request names the module or program as the change has it; the base's program maps the files the change
renamed back to their old module names and paths (``RENAMED``), so each version runs under its own;
it shows the classes a renamed module defines under the change's name (``calc_util.ParseError`` as
``lib.stats.ParseError``), so the rename alone is no difference.

The calls run in a Python process of their own, started by the program once per sandbox with
``PYTHONHASHSEED=0`` (the harness's interpreter runs isolated, ignoring that variable; this one runs as it
otherwise, without ``site``): a set or dict of strings then iterates in the same order in every run of
either version, so it is no difference. The process inherits the sandbox and its limits; when it ends
during a call, that call is a ``crash`` (``memory`` when it was killed as the kernel kills a group out of
memory) and the next starts another. It reports its CPU time with each result and is replaced before a
call once it has used half its CPU-time limit (the harness's, inherited: at least twice a test's wall-clock
limit), so the calls before cannot leave a call too little; a call that alone runs past the limit is still
that call's ``crash``. Each request it gets carries a fresh random key, and only its answer line that
holds the key is read (the code under test may write on that pipe too, but is not given the key); a line
with another key-shaped value is a guess at it, which makes the call's outcome a forged result
(:data:`.seal.FORGED`) and replaces the process, as a result line with another nonce does (:mod:`.seal`).
The process runs the program in a namespace of its own (its ``__main__`` module holds none of it) with a copy of
the builtins, and binds the library functions it uses (its JSON reader and writer, ``os.write``, its clock,
``hashlib.sha256``, ``ast.literal_eval``, ``importlib.import_module``) before any code under test is
imported, so code that patches them, the builtins or ``__main__`` changes no answer; code that reads the
process's memory (its frames) still could. Where it cannot start, the calls run in the harness's process,
whose ``main`` binds what writes the result line (the JSON reader and writer, its own functions, the
output's ``write``) before any call: code under test loaded there changes no answer by patching them.

Everything the program prints comes from running untrusted code and is read as data: a missing or
malformed line is an outcome (``crash``; one with the nonce that cannot be read is compared by its
digest), never an error of the review.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from memdoor.core.problem import TestCase
from memdoor.core.verdict import TestResult
from memdoor.review.differential.functions import ChangedFunction
from memdoor.review.differential.inputs import Call
from memdoor.review.differential.seal import FORGED, FORGED_DIGEST, MARK, forged, results

MAX_TEXT = 600
"""Characters of a result's text kept (its digest is of the whole)."""
MAX_SHOWN_OUTPUT = 1200
"""Characters of a program's output as a counterexample shows it (its repr, cut), at most."""
MAX_LINE = 3600
"""Characters of a driver's result line (its JSON) at most: the sandbox keeps 4,096 of a test's output."""
MAX_NODES = 100_000
"""Values a driver reads of one value's parts nested deeper than it writes (their digest is of those)."""
FORGED_LINE = json.dumps({"k": "crash", "r": FORGED, "h": FORGED_DIGEST})
"""The result a driver writes for a call whose keyed answer was forged (:data:`.seal.FORGED`)."""

_SHARED = r"""
import io, opcode, os, sys


def _type(e):
    t = type(e)
    return t.__qualname__ if t.__module__ == "builtins" else t.__module__ + "." + t.__qualname__


def _missing(e, _import=bytes([opcode.opmap["IMPORT_NAME"]]),
             _finder=getattr(sys.modules.get("_frozen_importlib"), "_find_and_load_unlocked", None)):
    # Whether an exception a call or a program raised is the import system's for a module the sandbox lacks
    # (an import statement, or importlib.import_module, that found no module): the code cannot run here. An
    # ImportError the code raises itself is behaviour, compared like any other exception.
    if type(e) is not ModuleNotFoundError or e.__traceback__ is None:
        return False
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return code is getattr(_finder, "__code__", None) or code.co_code[tb.tb_lasti : tb.tb_lasti + 1] == _import


def _site_exits():
    # exit() and quit(), which site defines and -S leaves out: they end the code as sys.exit does, so a change
    # from sys.exit(1) to exit(1) is no difference (it was a NameError on one side only).
    import builtins

    def exit(code=None):
        raise SystemExit(code)

    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, exit)


def _read(fd, _pread=os.pread):
    # All a file holds, read from its start.
    chunks, at = [], 0
    while True:
        chunk = _pread(fd, 1 << 20, at)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        at += len(chunk)

"""
"""What both the driver and a program's own process (:data:`CHILD`) run: light imports only, as the latter
starts once for each run."""

CHILD = (
    _SHARED
    + r"""
_STDIN = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
_STDOUT = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def _names(file, fd, paths):
    # Whether open(file) opens standard input (fd 0) or output (fd 1).
    return (isinstance(file, int) and file == fd) or (isinstance(file, str) and file in paths)


def _writer(mode):
    # A file object on descriptor 1 that writes through (nothing is left in a buffer when the program ends)
    # and never closes it.
    raw = io.FileIO(1, "w", closefd=False)
    if "b" in mode:
        return raw
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", write_through=True)


def _child(report, reader, path, roots, _write=os.write, _close=os.close, _urandom=os.urandom):
    # A standard-input program's own process, started by the driver's _program with its input on descriptor 0
    # and descriptor 1 on the file its output is read from: it runs as `python path` would run it (in the
    # interpreter's __main__ module, sys.argv [path], its folder first on sys.path, sys.stdin reading
    # descriptor 0, sys.stdout writing through to 1) and ends as the interpreter does (its threads waited
    # for, its atexit handlers run, sys.stdout flushed, its module's names let go in the interpreter's order:
    # a file it left open is flushed as Python flushes it; an exception it raised, or its SystemExit, is
    # raised on, so the process's exit status is Python's). How its code ended (kind, end, message) it
    # writes on the pipe `report` (the driver's `reader` reads it), in a line after the key it wrote there
    # first, before any code under test ran, from the atexit handler that runs last; this code's own names
    # (its builtins a copy) are none of the program's.
    import atexit, builtins
    report = _moved(report)
    key = _urandom(16).hex().encode("ascii")
    _put(report, key + b"\n", _write)
    ended = ["exit", "exit status 0", ""]
    atexit.register(_reporter(report, reader, key, ended))  # the first registered, it runs last
    sys.stdin.reconfigure(encoding="utf-8")
    sys.stdout.reconfigure(encoding="utf-8", errors="replace")
    names = vars(sys.modules["__main__"])
    loader = getattr(sys.modules.get("_frozen_importlib_external"), "SourceFileLoader", None)
    names.clear()
    names.update(__name__="__main__", __doc__=None, __package__=None, __spec__=None, __file__=path,
                 __cached__=None, __builtins__=builtins, __loader__=loader and loader("__main__", path))
    sys.argv = [path]
    del sys.path[0]
    for root in roots:
        if root not in sys.path:
            sys.path.insert(0, root)
    sys.path.insert(0, os.path.dirname(path))
    real_open = builtins.open

    def open(file, mode="r", *args, **kwargs):
        writes = any(c in mode for c in "wax+")
        if _names(file, 1, _STDOUT) and writes:
            return _writer(mode)  # not the file itself: opening it again for writing would empty it
        if isinstance(file, str) and file in _STDIN and not writes:
            raw = io.BytesIO(_read(0))  # the input from its start, as opening a file again reads it
            return raw if "b" in mode else io.TextIOWrapper(raw, encoding="utf-8")
        return real_open(file, mode, *args, **kwargs)

    builtins.open = open
    _site_exits()
    try:
        with real_open(path, "rb") as f:
            code = compile(f.read(), path, "exec")
    except BaseException as e:
        ended[:] = "import", _type(e), _message(e)
        raise
    try:
        exec(code, names)
    except SystemExit as e:
        ended[1:] = "exit status " + str(_status(e.code)), _message(e.code) if _printed(e.code) else ""
        raise
    except BaseException as e:
        ended[:] = "import" if _missing(e) else "exit", _type(e), _message(e)
        raise


def _status(code, _int=int.__int__):
    # The exit status SystemExit(code) ends the interpreter with: an int's (a bool is one) as the C exit()
    # takes it (its low 8 bits; -1 for one no C long holds), 0 for None, 1 for anything else (printed).
    if isinstance(code, int):
        n = _int(code)
        return (n if -(1 << 63) <= n < (1 << 63) else -1) & 0xFF
    return 0 if code is None else 1


def _printed(code):
    # Whether SystemExit's code is a message (the interpreter prints it): neither None nor an int.
    return code is not None and not isinstance(code, int)


def _moved(fd):
    # The pipe fd moved to a high descriptor (a program closing descriptors from 3 up to 1024 leaves it; the
    # low ones are the program's, as in `python path`), closed on exec and in a child the program forks
    # (which would hold it open, or write a report of its own).
    import fcntl
    try:
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, max(3, min(os.sysconf("SC_OPEN_MAX") - 1, 1 << 16)))
    except (OSError, ValueError):
        high = fd
        os.set_inheritable(fd, False)
    else:
        os.close(fd)
    os.register_at_fork(after_in_child=lambda: _shut(high))
    return high


def _shut(fd):
    try:
        os.close(fd)
    except OSError:
        pass


def _reporter(report, reader, key, ended, _write=os.write, _close=os.close, _getpid=os.getpid):
    # The atexit handler that writes how the code ended (ended) on the pipe, after key, when the process
    # that started the code ends (not a child the program forked). A program that closed the pipe's
    # descriptor has it opened again by the name of the driver's end (`reader`), for a line the pipe holds
    # whole: the driver reads it once the process has ended. An atexit handler of the program that ends the
    # process (os._exit) runs before it: then there is no report, and the exit status says how it ended.
    me, driver, pipe = _getpid(), os.getppid(), _inode(report)

    def end():
        if _getpid() != me:
            return
        try:
            if _inode(report) != pipe:
                raise OSError("no longer the pipe")
            _put(report, _line(key, ended, 1 << 20), _write)
        except OSError:
            try:
                again = os.open("/proc/%d/fd/%d" % (driver, reader), os.O_WRONLY | os.O_CLOEXEC)
            except OSError:
                return
            try:
                if _inode(again) == pipe:
                    _put(again, _line(key, ended, 4000), _write)
            except OSError:
                pass
            finally:
                _close(again)

    return end


def _inode(fd, _fstat=os.fstat):
    try:
        st = _fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _line(key, ended, most):
    # The report line, of at most `most` bytes (its message cut: the driver does not compare it).
    kind, end, message = ended
    while True:
        line = b"\n" + key + b" " + repr((kind, end, message)).encode("utf-8", "surrogatepass") + b"\n"
        if len(line) <= most or not message:
            return line
        message = message[: len(message) // 2]


def _message(e):
    # An exception's message (or a SystemExit's code that is no number), cut (the driver cuts it further).
    try:
        return str(e)[:20000]
    except BaseException:
        return "<unprintable>"


def _put(fd, data, _write):
    while data:
        data = data[_write(fd, data) :]


_child(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:])
"""
)
"""The program a standard-input Python program runs in: one process of its own for each run."""

DRIVER = (
    _SHARED
    + r"""
import ast, hashlib, importlib, itertools, json, re

_ADDR = re.compile(r" at 0x[0-9A-Fa-f]+")
_HOME = os.getcwd()
_ROOT = os.path.join(_HOME, TREE)
_BOOT = ("import builtins\nexec(compile(" + repr(CHILD) + ", '<memdoor>', 'exec'), "
         "{'__name__': 'memdoor', '__builtins__': dict(vars(builtins))})\n")
_FORGED = json.loads(FORGED_LINE)
_OUT_OF_MEMORY = '{"k": "memory"}'
_ESCAPED = {c: "\\u%04x" % c for c in [*range(0xD800, 0xE000), 0x85, 0x2028, 0x2029]}


class _Sink(io.TextIOBase):
    def write(self, s):
        return len(s)

    def writable(self):
        return True


def _setup():
    _site_exits()
    ready = os.path.join(_ROOT, ".memdoor-ready")
    if not os.path.exists(ready):
        os.makedirs(_ROOT, exist_ok=True)  # a version without Python files has none to make it
        for rel, text in FILES.items():
            path = os.path.join(_ROOT, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        open(ready, "w").close()
    for entry in ROOTS:
        path = os.path.join(_ROOT, entry) if entry else _ROOT
        if path not in sys.path:
            sys.path.insert(0, path)


def _canon(v, depth=0, seen=None, left=None, _islice=itertools.islice):
    # seen: the ids of the lists and dicts around v, one met again written [Circular] (None: not tracked,
    # as for a function's values, which print as they always have). A value nested deeper than 40 is
    # written "...#" and a digest of its whole (_deep); left: the values _deep may still read, shared by
    # all of one value's deep parts.
    if left is None:
        left = [MAX_NODES]
    if depth > 40:
        return "...#" + _deep(v, seen, left)
    t = type(v)
    if seen is not None and (t is list or t is dict):
        if id(v) in seen:
            return "[Circular]"
        seen = seen | {id(v)}
    if t is list:
        return "[" + ", ".join(_canon(x, depth + 1, seen, left) for x in v) + "]"
    if t is tuple:
        inner = ", ".join(_canon(x, depth + 1, seen, left) for x in v)
        return "(" + inner + ("," if len(v) == 1 else "") + ")"
    if t is dict:
        pairs = (
            _canon(k, depth + 1, seen, left) + ": " + _canon(x, depth + 1, seen, left) for k, x in v.items()
        )
        return "{" + ", ".join(pairs) + "}"
    if t is set or t is frozenset:
        inner = ", ".join(sorted(_canon(x, depth + 1, seen, left) for x in v))
        if t is set:
            return "{" + inner + "}" if v else "set()"
        return "frozenset({" + inner + "})" if v else "frozenset()"
    if _drained(v, t):
        return "iterator " + _canon(list(_islice(v, 10000)), depth + 1, seen, left)
    return _ADDR.sub(" at 0x?", repr(v))


def _drained(v, t):
    # Whether v is a built-in iterator, written as its items (up to a bound).
    return hasattr(v, "__next__") and hasattr(v, "__iter__") and t.__module__ in ("builtins", "itertools")


def _hash(s, _sha256=hashlib.sha256):
    return _sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _deep(v, seen, left):
    # The whole of a value nested too deep for _canon to write, as a digest (so that two values that differ
    # only down there still differ): a list, tuple, dict, set or built-in iterator the digest of its kind
    # and its items' digests (a set's sorted), any other value of its text. It is walked without recursion,
    # a list or dict met again inside itself is [Circular], and at most left[0] values are read (those
    # after are "cut"): its time and memory are bounded.
    path, stack = set(seen or ()), []
    d = _enter(v, path, stack, left)
    while stack:
        frame = stack[-1]  # [kind, items, next item, items' digests, id on the path]
        if d is not None:
            frame[3].append(d)
            d = None
        if frame[2] < len(frame[1]) and left[0] <= 0:
            frame[2] = len(frame[1])
            frame[3].append("cut")
        if frame[2] < len(frame[1]):
            frame[2] += 1
            d = _enter(frame[1][frame[2] - 1], path, stack, left)
            continue
        stack.pop()
        path.discard(frame[4])
        parts = sorted(frame[3]) if frame[0] == "set" else frame[3]
        d = _hash(frame[0] + "(" + ",".join(parts) + ")")
    return d[:16]


def _enter(v, path, stack, left, _islice=itertools.islice):
    # v's digest when it holds no values of its own; else None, its frame pushed for _deep to walk.
    left[0] -= 1
    t = type(v)
    if left[0] < 0:
        return "cut"
    if t is list or t is dict:
        if id(v) in path:
            return "[Circular]"
        path.add(id(v))
        items = list(v) if t is list else [y for pair in v.items() for y in pair]
        stack.append([t.__name__, items, 0, [], id(v)])
    elif t is tuple or t is set or t is frozenset:
        stack.append(["tuple" if t is tuple else "set", list(v), 0, [], None])
    elif _drained(v, t):
        stack.append(["iterator", list(_islice(v, 10000)), 0, [], None])
    else:
        return _hash("value " + _ADDR.sub(" at 0x?", repr(v)))
    return None


def _state(obj):
    # An instance's own attributes (its __dict__, and the __slots__ it set), sorted by name, as text: what
    # an instance method leaves behind is compared.
    try:
        fields = dict(getattr(obj, "__dict__", None) or {})
        for cls in type(obj).__mro__:
            slots = cls.__dict__.get("__slots__", ())
            for name in [slots] if isinstance(slots, str) else slots:
                mangled = name.startswith("__") and not name.endswith("__") and cls.__name__.strip("_")
                if name not in ("__dict__", "__weakref__") and name not in fields:
                    try:
                        fields[name] = getattr(obj, "_" + cls.__name__.lstrip("_") + name if mangled else name)
                    except AttributeError:  # a slot not set
                        pass
        pairs = sorted((str(k), _canon(v, 1, set())) for k, v in fields.items())
        return "{" + ", ".join(repr(k) + ": " + v for k, v in pairs) + "}"
    except BaseException as e:
        return "<unprintable: " + _type(e) + ">"


def _text(s):
    s = _ADDR.sub(" at 0x?", s)
    return s[:MAX_TEXT], _hash(s)


def _renamer(module, name, _escape=re.escape, _compile=re.compile):
    # The base runs a file the change renamed under its old module name: the classes it defines are shown
    # under the change's name (``name``), so that the rename alone makes no difference.
    old = module.__name__
    try:
        own = sorted({_escape(v.__qualname__.split(".")[0]) for v in vars(module).values()
                      if isinstance(v, type) and v.__module__ == old})
    except BaseException:
        own = []
    if old == name or not own:
        return lambda s: s
    pattern = _compile(r"(?<![\w.])" + _escape(old) + r"\.(?=(?:" + "|".join(own) + r")\b)")
    return lambda s: pattern.sub(lambda _: name + ".", s)


def _cannot_run(e):
    # The code cannot run here (it does not parse, or a module it imports is missing): not behaviour.
    r, h = _text(str(e))
    return {"k": "import", "t": _type(e), "r": r, "h": h}


def _program(req, _close=os.close):
    # A standard-input program, run as `python path` would run it, in a process of its own (CHILD's): its
    # input on descriptor 0 (sys.stdin, os.read(0, ...), open(0), /dev/stdin), its output all it writes to
    # descriptor 1 (sys.stdout, os.write(1, ...), open(1) or /dev/stdout, a child process's), each an unnamed
    # file; its end an exit status or an exception, as that process reports it. It ends as an interpreter
    # ends (atexit handlers, files it left open flushed), and what one run changes in its interpreter no other
    # run sees. Killed as the kernel kills a group out of memory, it ran out of memory (_OUT_OF_MEMORY).
    _setup()
    path = os.path.join(_ROOT, RENAMED["p"].get(req["p"], req["p"]))
    roots = [os.path.join(_ROOT, entry) if entry else _ROOT for entry in ROOTS]
    fds = []
    try:
        ended, used, said, printed = _run(path, roots, req["i"].encode("utf-8", "surrogatepass"), fds)
    except OSError as e:
        return {"k": "crash", "r": _text("its process cannot run: " + _type(e) + ": " + str(e))[0]}
    finally:
        for fd in fds:
            _close(fd)
    if said is not None and said[0] == "forged":
        return dict(_FORGED)
    if said is not None and said[0] == "import":
        r, h = _text(said[2])
        return {"k": "import", "t": said[1], "r": r, "h": h}
    if said is not None:
        end, message = said[1], said[2]
    elif ended >= 0:  # it ended before its code did (os._exit)
        end, message = "exit status " + str(ended), ""
    elif _out_of_memory(ended, used):
        return json.loads(_OUT_OF_MEMORY)
    else:
        return {"k": "crash", "r": "its process ended (signal " + str(-ended) + ")"}
    r, h = _text(printed.decode("utf-8", "replace"))
    return {"k": "exit", "t": end, "r": r, "h": h, "m": _text(message)[0]}


def _run(path, roots, data, fds, _spawn=os.posix_spawn, _pipe=os.pipe, _wait4=os.wait4, _close=os.close,
         _inherit=os.set_inheritable, _python=sys.executable, _env=dict(os.environ, PYTHONHASHSEED="0")):
    # The program at path run in its own process (CHILD) on the input data: how that process ended (its exit
    # code, its resource use), its report (_said) and its output. The descriptors it opens go in fds. The
    # run ends when that process ends, as `python path < input` returns: a child it forked and left running
    # (its own process group's) is killed then, before its output is read.
    given = _capture("-input")
    fds.append(given)
    out = _capture("-output")
    fds.append(out)
    _fill(given, data)
    null = os.open(os.devnull, os.O_RDWR)
    fds.append(null)
    reader, writer = _pipe()
    fds.append(reader)
    try:
        _inherit(writer, True)
        argv = [_python, "-s", "-S", "-u", "-c", _BOOT, str(writer), str(reader), path, *roots]
        moves = [(os.POSIX_SPAWN_DUP2, fd, k) for k, fd in enumerate((given, out, null))]
        pid = _spawn(_python, argv, _env, file_actions=moves, setpgroup=0)
    finally:
        _close(writer)
    ended = []
    said = _said(reader, _ending(pid, ended, _wait4))
    _, status, used = ended[0] if ended else _wait4(pid, 0)
    try:
        os.killpg(pid, 9)  # SIGKILL
    except OSError:
        pass
    return os.waitstatus_to_exitcode(status), used, said, _read(out)


def _ending(pid, ended, _wait4, _recv=os.read):
    # os.read for _said on the pipe of the process pid: at its end (no process holds the pipe open) the
    # process is waited for (its wait4 in ended), then what it wrote since (a report written on the pipe
    # opened again, after the program closed its descriptor) is read, without waiting more.
    def recv(fd, size):
        while True:
            try:
                chunk = _recv(fd, size)
            except BlockingIOError:
                return b""
            if chunk or ended:
                return chunk
            ended.append(_wait4(pid, 0))
            os.set_blocking(fd, False)

    return recv


_SHAPED = re.compile(rb"[0-9A-Fa-f]{32} ")


def _said(fd, _recv=os.read, _literal=ast.literal_eval, _shaped=_SHAPED.match):
    # How a program's code ended, as its process (CHILD) reported it on the pipe fd, read to its end: (kind,
    # end, message) from the last line that starts with the key the first line holds; None without one;
    # ("forged", "", "") when a line starts with another key-shaped value (32 hexadecimal digits and a
    # space): a guess at the key, which a program reading its process's memory could make for each candidate
    # it finds there. It gets one guess. Of a line longer than 256 KiB only the start is read (no report).
    key, said, guessed, rest = None, None, False, b""
    while True:
        chunk = _recv(fd, 1 << 16)
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop() if chunk else b""
        for line in lines:
            if key is None:
                key = line if len(line) == 32 and _shaped(line + b" ") else b""
            elif key and _shaped(line):
                if line[:32] == key:
                    said = line[33:]
                else:
                    guessed = True
        if len(rest) > 1 << 18:
            rest = rest[:33] + b"\0"
        if not chunk:
            break
    if guessed:
        return ("forged", "", "")
    try:
        kind, end, message = _literal(said.decode("utf-8", "surrogatepass"))
    except BaseException:  # no report, or one cut
        return None
    ok = kind in ("exit", "import") and type(end) is str and type(message) is str
    return (kind, end, message) if ok else None


def _out_of_memory(code, used):
    # Whether a process that ended with code, using used (its rusage), was killed as the memory killer kills:
    # SIGKILL before its CPU time reached the limit the kernel also enforces with SIGKILL.
    import resource, signal
    cpu = resource.getrlimit(resource.RLIMIT_CPU)[1]
    spent = used.ru_utime + used.ru_stime
    return code == -signal.SIGKILL and (cpu == resource.RLIM_INFINITY or spent < cpu - 1)


def _capture(suffix, _open=os.open, _unlink=os.unlink, _unnamed=getattr(os, "O_TMPFILE", 0)):
    # A file without a name in the sandbox's private /tmp, for a program's input or output.
    if _unnamed:
        try:
            return _open(_HOME, _unnamed | os.O_RDWR, 0o600)
        except OSError:
            pass
    path = os.path.join(_HOME, TREE + suffix)
    fd = _open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    _unlink(path)
    return fd


def _fill(fd, data, _write=os.write, _seek=os.lseek):
    # The file fd holding data, read from its start.
    while data:
        data = data[_write(fd, data) :]
    _seek(fd, 0, os.SEEK_SET)



def _call(req, _load=importlib.import_module, _literal=ast.literal_eval):
    if "p" in req:
        return _program(req)
    try:
        _setup()
        module = _load(RENAMED["m"].get(req["m"], req["m"]))
        named = _renamer(module, req["m"])
        target = module
        parts = req["f"].split(".")
        method = len(parts) == 2 and req["c"] == "method"
        if len(parts) == 2:
            target = getattr(module, parts[0])
            if method:
                target = target()
        fn = getattr(target, parts[-1])
    except BaseException as e:
        return _cannot_run(e)
    args = _literal(req["a"])
    before = _canon(args)
    held = _state(target) if method else None
    try:
        value = fn(*args)
        if hasattr(value, "__await__"):
            import asyncio
            value = asyncio.run(value)
        r, h = _text(named(_canon(value)))
        out = {"k": "return", "t": named(_type(value)), "r": r, "h": h}
    except BaseException as e:
        if _missing(e):  # a module the function imports when called, which the sandbox lacks
            out = _cannot_run(e)
        else:
            r, h = _text(named(str(e)))
            out = {"k": "raise", "t": named(_type(e)), "r": r, "h": h}
    try:
        after = _canon(args)
    except BaseException:
        after = before
    if after != before:
        out["a"], out["ah"] = _text(named(after))
    now = _state(target) if method else None
    if now != held:  # the instance the method changed: its state after (compared) and before (shown)
        out["s"], out["sh"] = _text(named(now))
        out["sb"] = _text(named(held))[0]
    return out


def _isolated(req, _input=io.StringIO):
    # The call with an empty standard input, what it prints discarded.
    out, err = sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = _input(""), _Sink(), _Sink()
    try:
        return _call(req)
    except BaseException as e:
        return {"k": "crash", "r": _text(_type(e) + ": " + str(e))[0]}
    finally:
        sys.stdout, sys.stderr = out, err


def _worker():
    # The process the calls run in: started once per sandbox (kept on sys, which outlives each test's
    # namespace) with PYTHONHASHSEED=0, so a set or dict of strings iterates in the same order in every run of
    # either version. None when it cannot start (the calls then run here).
    import subprocess
    w = getattr(sys, "_memdoor_worker", None)
    if w is not None and w.poll() is None:
        if not _spent(w):
            return w
        _retire(w)
    # The program runs in a namespace of its own, with a copy of the builtins taken before any code under
    # test runs: its __main__ module holds none of its functions, and patching builtins or __main__ changes
    # no answer. The script's folder is no import root.
    names = {"__name__": "__main__", "FILES": {}, "ROOTS": ROOTS, "RENAMED": RENAMED, "TREE": TREE,
             "MARK": MARK, "MAX_TEXT": MAX_TEXT, "MAX_LINE": MAX_LINE, "MAX_NODES": MAX_NODES, "SOURCE": "",
             "FORGED_LINE": FORGED_LINE, "CHILD": CHILD, "WORKER": True}
    script = ("import builtins, sys\nsys.path.pop(0)\nexec(compile(" + repr(SOURCE) + ", __file__, 'exec'), dict("
              + repr(names) + ", __builtins__=dict(vars(builtins))))\n")
    path = os.path.join(os.getcwd(), TREE + "-worker.py")
    try:
        _setup()
        with open(path, "w", encoding="utf-8") as f:
            f.write(script)
        env = {"PATH": "/usr/bin", "HOME": os.environ.get("HOME", "/tmp"), "PYTHONHASHSEED": "0"}
        # as the harness's interpreter (-I -S: no site, no user site, no PYTHON* variable but this one's,
        # which -I would ignore)
        w = subprocess.Popen([sys.executable, "-s", "-S", path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    except BaseException:
        return None
    sys._memdoor_worker = w
    return w


def _delegate(req):
    # The result line of the request run in the worker; None without a worker.
    w = _worker()
    if w is None:
        return None
    try:
        key = _key()
        w.stdin.write(key + b" " + json.dumps(req).encode("ascii") + b"\n")
        w.stdin.flush()
        line = _answer(w, key)
    except (OSError, ValueError):
        line = ""
    if line is None:  # a guess at the key: the worker, and what it may still write, goes
        _retire(w)
        return FORGED_LINE
    if line:
        used, _, rest = line.partition(" ")
        try:
            w.memdoor_cpu = float(used)
        except ValueError:
            return line
        return rest
    code = _ended(w)
    end = "signal " + str(-code) if code < 0 else "exit status " + str(code)
    return json.dumps({"k": "crash", "r": "its process ended (" + end + ")"})


def _key():
    # A fresh random key for one request: the worker's answer carries it. The code under test can write on
    # the worker's answer pipe, but cannot know the key.
    return os.urandom(16).hex().encode("ascii")


_KEYED = re.compile(rb"[0-9A-Fa-f]{32} ")


def _answer(w, key):
    # The worker's answer to the request sent with ``key``: the first line that holds the key (a line
    # without anything shaped like a key, written by the code under test, is skipped); "" when the worker
    # ends first; None when a line holds another key-shaped value (32 hexadecimal digits and a space) before
    # the key or without it: a guess at the key, which code that reads the worker's memory could make for
    # each candidate it finds there. It gets one guess, and a wrong one is a forged answer.
    while True:
        raw = w.stdout.readline()
        if not raw:
            return ""
        before, found, rest = raw.partition(key + b" ")
        if _KEYED.search(before) is not None:
            return None
        if found:
            return rest.decode("utf-8", "replace").strip()


def _spent(w):
    # Whether the worker has used half its CPU-time limit or more (the limit the harness set, inherited;
    # it counts all of the worker's calls): it is replaced before the next call, so that the calls before
    # cannot make that call run out of CPU time. The sandbox's limit is at least twice a test's wall-clock
    # limit (plus 5 s), so each call starts with more CPU time left than it may run for.
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    limits = [x for x in (soft, hard) if x != resource.RLIM_INFINITY]
    return bool(limits) and getattr(w, "memdoor_cpu", 0.0) * 2 >= min(limits)


def _retire(w):
    # The worker between two calls, ended; the next call starts another (as after a crash).
    for step in (w.kill, w.wait, w.stdin.close, w.stdout.close):
        try:
            step()
        except BaseException:
            pass


def _ended(w):
    # How the worker ended. Killed (SIGKILL) before its CPU time reached the limit the kernel also enforces
    # with SIGKILL, it was the memory killer's: the call ran out of memory, as the harness reports its own.
    try:
        _, status, used = os.wait4(w.pid, 0)
        w.returncode = os.waitstatus_to_exitcode(status)
    except (ChildProcessError, ValueError):
        return w.wait()
    if _out_of_memory(w.returncode, used):
        raise MemoryError("the call's process was killed: out of memory")
    return w.returncode


def _encode(out, _quote=json.encoder.encode_basestring, _dumps=json.dumps, _sorted=sorted):
    # A result as JSON, by functions bound before any code under test runs, at most MAX_LINE characters
    # (the sandbox keeps 4,096 of a test's output): text other than ASCII written as itself (escaped: a
    # lone surrogate, and what Python reads as a line break), a type longer than 200 characters cut with
    # its digest after, and while the line is too long the longest shown text (value, arguments, instance,
    # message) cut by half: what is compared of them is their digests. A result is a dict of strings;
    # anything else, which only a patched driver could make, goes to json.dumps.
    if type(out) is not dict or not all(type(k) is str and type(v) is str for k, v in out.items()):
        return _dumps(out).encode("ascii")
    out = dict(out)
    if len(out.get("t", "")) > 200:
        out["t"] = out["t"][:100] + "...#" + _hash(out["t"])
    while True:
        text = "{" + ", ".join(_quote(k) + ": " + _quote(v) for k, v in out.items()) + "}"
        text = text.translate(_ESCAPED)
        cut = _sorted((k for k in ("r", "a", "s", "sb", "m") if out.get(k)), key=lambda k: -len(out[k]))
        if len(text) <= MAX_LINE or not cut:
            return text.encode("utf-8")
        out[cut[0]] = out[cut[0]][: len(out[cut[0]]) // 2]


def _serve():
    # The worker: a request a line on standard input, its result a line on standard output; both moved
    # aside first, so what the code under test writes to file descriptors 0 to 2 goes nowhere. Each result
    # line starts with the worker's CPU time so far. What the loop uses (the clock, the JSON reader and
    # writer, os.write, the call) is bound here, before any code under test is imported: patching json,
    # time or os changes no answer.
    import time
    cpu, write, call, encode = time.process_time, os.write, _isolated, _encode
    scan = json.JSONDecoder().scan_once
    requests, results = os.fdopen(os.dup(0), "rb"), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for line in requests:
        key, _, req = line.partition(b" ")
        out = encode(call(scan(req.decode("utf-8", "surrogatepass"), 0)[0]))
        data = key + b" " + b"%.3f " % cpu() + out + b"\n"
        while data:
            data = data[write(results, data) :]


def main(_loads=json.loads, _encode=_encode, _isolated=_isolated, _delegate=_delegate, _mark=MARK,
         _memory=_OUT_OF_MEMORY):
    # The test's first line is the nonce (read before any code under test runs), the request the rest. All
    # that writes the result line is bound first: where the call runs in this process (no calls process),
    # code under test that patches json, the driver's functions or its output's write changes no answer. A
    # program whose process ran out of memory does here, as the harness reports it.
    write = sys.stdout.write
    nonce, _, text = sys.stdin.read().partition("\n")
    req = _loads(text)
    line = _delegate(req)
    if line is None:
        line = _encode(_isolated(req)).decode("utf-8")
    if line == _memory:
        raise MemoryError("the program's process was killed: out of memory")
    write(_mark + nonce + " " + line + "\n")


if WORKER:
    _serve()
else:
    main()
"""
)


def program(
    files: dict[str, str],
    roots: list[str],
    modules: dict[str, str] | None = None,
    paths: dict[str, str] | None = None,
) -> str:
    """The sandbox program of one version: its files, the directories put on ``sys.path``, the driver.
    ``modules``, ``paths``: the base's own module name and path of each the change renamed (by the new)."""
    text = repr(files)
    tree = "memdoor-tree-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    renamed = {"m": dict(sorted((modules or {}).items())), "p": dict(sorted((paths or {}).items()))}
    head = f"FILES = {text}\nROOTS = {sorted(set(roots))!r}\nRENAMED = {renamed!r}\nTREE = {tree!r}\n"
    head += f"MARK = {MARK!r}\nMAX_TEXT = {MAX_TEXT}\nMAX_LINE = {MAX_LINE}\nMAX_NODES = {MAX_NODES}\n"
    head += f"FORGED_LINE = {FORGED_LINE!r}\nCHILD = {CHILD!r}\n"
    return head + f"WORKER = False\nSOURCE = {DRIVER!r}\n" + DRIVER


def request(fn: ChangedFunction, call: Call) -> TestCase:
    """One call as a test of the program: its request on standard input, no expected output."""
    text = json.dumps({"m": fn.module, "f": fn.name, "c": fn.kind, "a": call.text})
    return TestCase(kind="stdin", input=text, output=None)


def program_request(path: str, stdin: str) -> TestCase:
    """One run of the standard-input program at the repository path ``path`` on ``stdin``."""
    return TestCase(kind="stdin", input=json.dumps({"p": path, "i": stdin}), output=None)


OutcomeKind = Literal["return", "raise", "import", "exit", "timeout", "memory", "crash"]


class CallOutcome(BaseModel):
    """What one call did on one version."""

    kind: OutcomeKind
    type: str = Field(
        default="",
        description="The returned value's or the exception's type; a program's end (``exit status 0``, an "
        "exception's type, ``panic``).",
    )
    text: str = Field(
        default="", description="repr of the value, the exception's message, or a program's output (cut)."
    )
    message: str = Field(default="", description="A program's exception or panic message (not compared).")
    digest: str = Field(default="", description="Of the whole text: compared, with kind and type.")
    mutated: str | None = Field(default=None, description="The arguments after the call, if it changed them.")
    mutated_digest: str | None = None
    state: str | None = Field(
        default=None, description="An instance method's instance after the call (its fields), if it changed."
    )
    state_digest: str | None = None
    state_before: str | None = Field(default=None, description="The instance before the call (not compared).")
    _not_compiled: bool = PrivateAttr(default=False)

    @classmethod
    def not_compiled(cls, text: str) -> CallOutcome:
        """A version that did not compile, as the sandbox's status says (never what a program printed)."""
        made = cls(kind="import", type="compile error", text=text)
        made._not_compiled = True
        return made

    @classmethod
    def forged(cls) -> CallOutcome:
        """A call or program whose output held a guess at its seal (:func:`.seal.forged`): a crash compared by
        its digest, the same on both versions, another than any other crash."""
        return cls(kind="crash", text=FORGED, digest=FORGED_DIGEST)

    @property
    def did_not_compile(self) -> bool:
        """Made by :meth:`not_compiled`: the sandbox said the program did not compile."""
        return self._not_compiled

    @field_validator("type", "text", "message", "mutated", "state", "state_before")
    @classmethod
    def _writable(cls, v: str | None) -> str | None:
        """A lone surrogate (a program may print or raise one) escaped, so the outcome can be written."""
        return None if v is None else v.encode("utf-8", "backslashreplace").decode("utf-8")

    @model_serializer(mode="wrap")
    def _drop_no_state(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """An outcome without an instance's state (every function's, program's, or a method's that left its
        instance as it was) is written as before that state was compared."""
        data = handler(self)
        if self.state is None:
            for key in ("state", "state_digest", "state_before"):
                data.pop(key, None)
        return data

    def key(self) -> tuple[str, str, str, str | None, str | None]:
        """What two outcomes must share to be the same behaviour: the kind, the type, a returned value's
        text, the arguments left behind, and the state an instance method left its instance in. An
        exception's message is not compared (a refactoring that rewords the error a nonsense input gets
        keeps behaviour), nor a crash's reason (only the digest of a result line it could not read). A
        program's output and how it ended are compared (not an exception's message)."""
        if self.kind == "crash":
            value = self.digest
        else:
            value = (self.digest or self.text) if self.kind in ("return", "exit") else ""
        return (self.kind, self.type, value, self.mutated_digest, self.state_digest)

    def show(self) -> str:
        """In words: ``returns 2.0``, ``raises ZeroDivisionError: division by zero``, ``timed out``."""
        if self.kind == "return":
            text = f"returns {self.text}"
        elif self.kind == "raise":
            text = f"raises {self.type}" + (f": {self.text}" if self.text else "")
        elif self.kind == "import":
            text = f"cannot be called ({self.type}: {self.text})"
        elif self.kind == "exit":
            return self._ended()
        elif self.kind == "timeout":
            text = "does not finish within the time limit"
        elif self.kind == "memory":
            text = "runs out of memory"
        else:
            text = "crashes" + (f" ({self.text})" if self.text else "")
        text += f", and leaves its arguments as {self.mutated}" if self.mutated else ""
        return text + (
            f", and changes its instance from {self.state_before} to {self.state}" if self.state else ""
        )

    def _ended(self) -> str:
        """A program's run: ``prints '3\\n' and exits with status 0``, ``prints nothing, then raises …``."""
        printed = f"prints {shown_output(self.text)}" if self.text else "prints nothing"
        if self.type.startswith("exit status"):
            return f"{printed} and exits with status {self.type.removeprefix('exit status').strip()}"
        end = self.type + (f": {self.message}" if self.message else "")
        return f"{printed}, then {'panics' if self.type == 'panic' else 'raises'} {end}".rstrip()


def shown_output(text: str, limit: int = MAX_SHOWN_OUTPUT) -> str:
    """A program's output as :meth:`CallOutcome.show` words it: its ``repr``, at most ``limit``
    characters, cut ones ending ``'…`` — so that how the run ended, which follows, is never cut off
    the counterexample's text (the finding's fingerprint reads it there: :mod:`memdoor.review.sarif`)."""
    shown, n = repr(text), len(text)
    while len(shown) > limit and n > 0:  # unprintable characters take up to 10 characters each
        n = max(0, min(n - 1, n * (limit - 1) // len(shown)))
        shown = repr(text[:n]) + "…"
    return shown


def _str(data: dict, key: str, limit: int = MAX_TEXT + 1) -> str:
    v = data.get(key)
    return v[:limit] if isinstance(v, str) else ""


def outcome(result: TestResult, nonce: str, last: bool = False) -> CallOutcome:
    """The outcome of one test of the program (a sandbox result: read as untrusted data), from its first
    result line with the test's ``nonce`` (:mod:`.seal`; ``last``: its last, for the Node driver, which
    prints after the program's own output). A line with the bare marker is no result; one with another
    nonce-shaped value makes the outcome :meth:`CallOutcome.forged` (one guess)."""
    if result.status == "time_limit":
        return CallOutcome(kind="timeout")
    if result.status == "memory_limit":
        return CallOutcome(kind="memory")
    if result.status != "passed":
        return CallOutcome(kind="crash", text=f"{result.status}: {result.detail}"[:MAX_TEXT])
    if forged(result.output or "", nonce):
        return CallOutcome.forged()
    marked = results(result.output or "", nonce)
    line = (marked[-1] if last else marked[0]) if marked else None
    try:
        data = json.loads(line) if line is not None else None
    except (ValueError, RecursionError):
        data = None
    if line is not None and not _readable(data):  # a result line cut or garbled: compared by its digest
        digest = hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return CallOutcome(kind="crash", text=f"unreadable result #{digest[:8]}", digest=digest)
    return from_mark(data)


def _readable(data: object) -> bool:
    """Whether a result line's JSON is a driver's result (:func:`from_mark` reads it)."""
    return isinstance(data, dict) and data.get("k") in ("return", "raise", "import", "exit", "crash")


def from_mark(data: object) -> CallOutcome:
    """The outcome a driver's result line holds (``k``, ``t``, ``r``, ``h``, ``m``, ``a``, ``ah``, and an
    instance method's ``s``, ``sh``, ``sb``), read as untrusted data; anything else is a crash."""
    if not _readable(data):
        return CallOutcome(kind="crash", text="no result")
    mutated, state = _str(data, "a") or None, _str(data, "s") or None
    return CallOutcome(
        kind=data["k"], type=_str(data, "t", 200), text=_str(data, "r"), digest=_str(data, "h", 64),
        message=_str(data, "m"), mutated=mutated, mutated_digest=_str(data, "ah", 64) if mutated else None,
        state=state, state_digest=_str(data, "sh", 64) if state else None,
        state_before=_str(data, "sb") if state else None,
    )  # fmt: skip
