"""A Rust test passes only when libtest itself reports it (issue 41, class 6).

HumanEval-X's harness (``cargo test``) looks only at the exit status, so ``std::process::exit(0)`` in the
function, a panic hook that exits 0 or a ``macro_rules! assert_eq`` of the program's own (which shadows the
standard one in the test module, textually after it) pass there. Here the test module is prepared first
(:func:`prepare`):

- every standard macro it invokes is called by its full path (``::std::assert_eq!``): a macro of the
  program cannot replace it (``::std`` names the standard crate, never an item of the program);
- after its ``use super::*;`` comes ``use ::std::prelude::rust_2021::*;``: a program item named like a
  prelude item the test uses (a ``struct String`` of its own with an always-true ``PartialEq``) makes the
  name ambiguous, so the tests do not build, instead of replacing it;
- each ``#[test]`` function gets a random suffix per run, so the names libtest will report are not in the
  prompt (the program would have to read its own binary to learn them);
- each ``#[test]`` function first binds a guard of the harness's own (:func:`harness`: a module of a random
  name, every path in it absolute, no item of the program in scope) that writes the run's secret and the
  test's name on stderr (its completion line) when the function returns without panicking.

Then the run must show libtest's own lines (:func:`missing`): ``test <module>::<name> ... ok`` for every
expected test and ``test result: ok. N passed; 0 failed`` with N at least their number (the program's own
tests run too, as officially); and each expected test's completion line (:func:`unfinished`). An early
exit, a panic hook that exits, an abort: libtest never writes its lines, the guard never its own.

libtest's lines alone can be forged: the names are in the binary, so a program can read ``/proc/self/exe``,
write the report and exit 0. The completion line cannot be written without the secret, which is not in the
binary: the grader puts it in ``/tmp/`` :data:`SECRET_FILE`, and the harness's function in ``.init_array``
reads and deletes it before ``main``, before any code of the program can run (a program that could run
earlier, by ``.init_array``, ``#[no_mangle]``, ``asm!``..., or that renames a crate to ``std``, is not
compiled at all: :mod:`.rust_untrusted`).

The secret is then in the process's memory, which safe std Rust can read through ``/proc/self/mem``: about
sixty lines find every 16 random-looking bytes of the binary's writable memory, some sixteen candidates
(a security review's answer passed, with one completion line per candidate). Two defences:

- the harness makes the process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``) before it takes the secret:
  ``/proc/self/mem`` then belongs to root, and the program, which is not root in its user namespace (bwrap;
  ``unshare`` when Memdoor runs as root), can neither open it to read nor to write (a process's own
  ``/proc/self/mem`` is otherwise always open to it: being dumpable or not changes only the file's owner).
  Under ``unshare`` as a user the program is root of its user namespace and still opens it;
- a completion-shaped line (any 32 hex digits) other than the harness's own, on stderr or stdout, fails the
  run (:func:`foreign`): the program gets one guess, and a wrong one is a failure.

What stays open: native code of the program. A program with ``unsafe`` or an ``extern "C"`` block (allowed,
as in HumanEval-X) runs in the same process as the harness, so nothing there is out of its reach: it can make
itself dumpable again (an ``extern "C"`` ``prctl``: ``/proc/self/mem`` opens again) or read the harness's
static through a raw pointer; so can safe code through a known soundness hole of the compiler
(rust-lang/rust#25860, as the cve-rs crate does). Such a program can find the secret and pass: the harness
only makes it take deliberate native code. Also open, since the tests then run and hold: the types the
program gives its function (a whole answer returning a type of its own whose ``PartialEq`` is always true, a
``struct bool`` of its own under the prompt's signature); the official harness passes those too.
"""

from __future__ import annotations

import re
import secrets

from memdoor.sandbox.lang.rustscan import closing, masked

STD_MACROS = (
    "assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne", "panic",
    "vec", "format", "matches", "unreachable", "unimplemented", "todo", "println", "print", "eprintln",
    "eprint", "write", "writeln", "dbg", "concat", "stringify",
)  # fmt: skip
_MACRO_CALL = re.compile(rf"(?<![\w:$])({'|'.join(STD_MACROS)})(\s*!\s*[(\[{{])")
_USE_SUPER = re.compile(r"^([ \t]*)use\s+super::\*\s*;", re.M)
_GAP = r"(?:\s|//[^\n]*\n|#\[[^\]]*\])*"  # blanks, line comments, other attributes
_TEST_FN = re.compile(rf"(#\[test\]{_GAP}(?:pub(?:\([^)]*\))?\s+)?fn\s+)([A-Za-z_]\w*)")
_MODULE = re.compile(r"\bmod\s+([A-Za-z_]\w*)\s*\{")
_SUMMARY = re.compile(r"^test result: ok\. (\d+) passed; 0 failed;")
_INNER_ATTRIBUTES = re.compile(r"(?:\s*#\s*!\s*\[[^\]]*\])*")
PRELUDE = "use ::std::prelude::rust_2021::*;"
SECRET_FILE = "memdoor-secret"
"""The file of ``/tmp`` the run's secret is in when the test binary starts (16 bytes)."""
SECRET_BYTES = 16
_SHAPED = re.compile(rb"(?m)^([0-9A-Fa-f]{%d}) [^\n]* ok$" % (2 * SECRET_BYTES))
"""A completion line's shape, with any value (:func:`foreign`)."""
_HARNESS = """
mod __memdoor_h{suffix} {{
    static SECRET: ::std::sync::OnceLock<[u8; {size}]> = ::std::sync::OnceLock::new();
    #[used]
    #[link_section = ".init_array"]
    static TAKE: extern "C" fn() = take;
    extern "C" {{
        fn prctl(option: ::std::ffi::c_int, ...) -> ::std::ffi::c_int;
    }}
    extern "C" fn take() {{
        unsafe {{ prctl(4, 0 as ::std::ffi::c_ulong) }}; // PR_SET_DUMPABLE 0: /proc/self/mem becomes root's
        let mut secret = [0u8; {size}];
        let read = match ::std::fs::File::open("/tmp/{file}") {{
            ::std::result::Result::Ok(mut f) => ::std::io::Read::read_exact(&mut f, &mut secret).is_ok(),
            ::std::result::Result::Err(_) => false,
        }};
        if ::std::fs::remove_file("/tmp/{file}").is_ok() && read {{
            let _ = SECRET.set(secret);
        }}
    }}
    pub(crate) struct Done(pub(crate) &'static str);
    impl ::std::ops::Drop for Done {{
        fn drop(&mut self) {{
            let secret = match SECRET.get() {{
                ::std::option::Option::Some(s) if !::std::thread::panicking() => s,
                _ => return,
            }};
            let mut hex = [0u8; {hex}];
            for (i, b) in secret.iter().enumerate() {{
                hex[2 * i] = b"0123456789abcdef"[(b >> 4) as usize];
                hex[2 * i + 1] = b"0123456789abcdef"[(b & 15) as usize];
            }}
            let mut e = ::std::io::stderr().lock();
            for part in [&b"\\n"[..], &hex[..], &b" "[..], self.0.as_bytes(), &b" ok\\n"[..]] {{
                let _ = ::std::io::Write::write_all(&mut e, part);
            }}
        }}
    }}
}}
"""


def _modules_at(text: str, at: int) -> list[str]:
    """The path of the modules open at ``at`` (``mod tests { mod inner { ... } }``: ``tests``, ``inner``)."""
    opened: list[tuple[str, int]] = []  # (module, brace depth inside it)
    depth = 0
    starts = {m.end() - 1: m.group(1) for m in _MODULE.finditer(text, 0, at)}
    for i in range(at):
        c = text[i]
        if c == "{":
            depth += 1
            if i in starts:
                opened.append((starts[i], depth))
        elif c == "}":
            if opened and opened[-1][1] == depth:
                opened.pop()
            depth -= 1
    return [name for name, _ in opened]


def harness(suffix: str) -> str:
    """The harness's own module: the completion guard and the function that takes the secret."""
    return _HARNESS.format(suffix=suffix, size=SECRET_BYTES, hex=2 * SECRET_BYTES, file=SECRET_FILE)


def _body(text: str, name_end: int) -> int | None:
    """Where the statements of the function whose name ends at ``name_end`` begin (after its ``{`` and any
    inner attributes), None when it has no body there."""
    params = text.find("(", name_end)
    if params < 0:
        return None
    brace = text.find("{", closing(text, params))
    if brace < 0 or ";" in text[params:brace]:
        return None
    return _INNER_ATTRIBUTES.match(text, brace + 1).end()  # type: ignore[union-attr]  # matches empty text


def prepare(test_code: str) -> tuple[str, list[str]]:
    """The test code as it is built here (with the harness's module), and the full names of the tests libtest
    must report, each of which must also write its completion line."""
    suffix = "_m" + secrets.token_hex(8)
    # comments and literals blanked: the patterns never match in them (Rust/32's whole test is commented out;
    # Rust/160 compares strings such as "//")
    text = masked(test_code)
    edits: list[tuple[int, str]] = [(m.start(), "::std::") for m in _MACRO_CALL.finditer(text)]
    edits += [(m.end(), " " + PRELUDE) for m in _USE_SUPER.finditer(text)]
    names: list[str] = []
    for m in _TEST_FN.finditer(text):
        name = "::".join([*_modules_at(text, m.start()), m.group(2) + suffix])
        names.append(name)
        edits.append((m.end(), suffix))
        if (body := _body(text, m.end())) is not None:
            edits.append((body, f' let _memdoor_done = crate::__memdoor_h{suffix}::Done("{name}");'))
    code = test_code
    for at, text in sorted(edits, reverse=True):
        code = code[:at] + text + code[at:]
    return code + harness(suffix), names


def completed(stderr: bytes, secret: bytes) -> tuple[bytes, set[str]]:
    """``stderr`` without the harness's completion lines, and the names of the tests whose line carries the
    run's ``secret``."""
    line = re.compile(rb"\n" + secret.hex().encode() + rb" ([^\n]*) ok\n")
    names = {m.group(1).decode(errors="replace") for m in line.finditer(stderr)}
    return line.sub(b"", stderr), names


def foreign(stdout: bytes, stderr: bytes, secret: bytes) -> str | None:
    """A completion-shaped line (any 32 hex digits, a name, ``ok``) the harness did not write (None: none):
    any on stdout, where the harness never writes one, and any on stderr whose value is not the run's
    ``secret``. A program that reads candidates for the secret out of its memory gets one guess, and a wrong
    one fails the run. The outputs as the process wrote them (before :func:`completed` takes lines out)."""
    if _SHAPED.search(stdout) is not None:
        return "stdout holds a completion line, which only the harness writes, on stderr"
    real = secret.hex().encode()
    if any(m.group(1) != real for m in _SHAPED.finditer(stderr)):
        return "stderr holds a completion line whose value is not the run's secret (a guess)"
    return None


def missing(stdout: bytes, expected: list[str]) -> str | None:
    """What libtest's report lacks for the ``expected`` tests (None: each one's ``... ok`` line and the
    summary counting them all, with nothing failed)."""
    lines = set(stdout.decode(errors="replace").splitlines())
    absent = [name for name in expected if f"test {name} ... ok" not in lines]
    if absent:
        return f"libtest never reported {absent[0]} as ok"
    counts = [int(m.group(1)) for line in lines if (m := _SUMMARY.match(line))]
    if not any(n >= len(expected) for n in counts):  # the program's own tests, if any, run too (officially)
        return f"libtest's summary 'test result: ok. {len(expected)} passed; 0 failed' is missing"
    return None


def unfinished(expected: list[str], done: set[str]) -> str | None:
    """The first of the ``expected`` tests that wrote no completion line (``done``: :func:`completed`)."""
    for name in expected:
        if name not in done:
            return f"{name} never wrote its completion line with the run's secret: libtest's report is forged"
    return None
