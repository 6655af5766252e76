"""The Rust programs that run one version of a changed standard-input program, or of a file's changed
functions, in the sandbox, and what they report.

Each version's program carries both versions of the file (:mod:`.rust_pair`): when either does not compile,
neither program does, and what did not compile is said (which file, which line) instead of a difference.
The program's own ``fn main`` is renamed and called from a ``main`` of ours that catches a panic (the panic
hook silenced), flushes standard output and prints one last line: :data:`MARK`, the nonce, then JSON with
how the run ended — ``exit status 0``, ``panic`` (its message not compared), or what a ``main`` returning
``Result`` or ``ExitCode`` returned. The sandbox compiles it once per run (the candidates' compiler,
crates and limits) and runs it on each input. A run that ends by ``process::exit`` has no last line: its
exit status is the end. A version that does not compile is ``import`` (it cannot run), not behaviour.
Before the program runs, our ``main`` reads the test's first line, the nonce (:mod:`.seal`), and takes it
out of the input (the input file keeps only the rest, and standard input reads it again from its start):
only a line with the nonce is read as the end, or as a call's result; a line the code under test prints
is its output, unless it is shaped like a result line with another nonce: a guess, which makes the run's
or call's outcome a forged result (:func:`.seal.forged`). Before it reads the nonce, ``main`` makes the
process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``, as the grader's Rust harness does: ``rust_report``):
its ``/proc/self/mem`` is then root's, and safe Rust of the code under test, which is not root in its user
namespace (bwrap; ``unshare`` when Memdoor runs as root), cannot open it to look for the nonce. Native code
of the file (``unsafe``, an ``extern "C"`` block) runs in the same process and can undo that.

For functions (:func:`function_harness`), every input is baked in as Rust literals of the declared
parameter types (:mod:`.rust_inputs`: only values that compile), one ``match`` arm each; a run reads the
input's number on standard input, makes that call with a panic caught, and prints the result's ``{:?}``
text (cut, with a digest of the whole) — a result without ``Debug`` is shown by its type's name — or the
panic's message. The text is made inside the call's closure, so a result that borrows from an argument
works too. A function of an impl is called as ``Type::f(...)``, a method on ``Type::default()``; a ``&mut
self`` method's value is kept, and its ``{:?}`` text after the call follows the result's. When the
harness's own code for one function's calls does not compile (:func:`harness_failed`), the stage makes one
harness per function instead (:mod:`.plan`), so that the others are still compared.

The files come from a pull request, and our code is compiled with them, so it sits in a module of its own
after both (:data:`HARNESS`): no item, trait or ``use`` of the file at the crate root is in scope there,
every path it writes is absolute (``::std::println!``, ``::std::string::String``, the inputs' literals
too: a ``macro_rules! println``, a ``struct String`` or a trait of the file is never what it calls), and it
names the file's functions by ``crate::``. A pair whose files could run code before ``main`` or take the
name ``std`` is not compiled with it at all (:func:`.rust_pair.refusal`: a note, not a difference).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from memdoor.core.verdict import TestResult
from memdoor.review.differential.driver import MARK, MAX_TEXT, CallOutcome, outcome
from memdoor.review.differential.rust_inputs import arguments
from memdoor.review.differential.rust_pair import (
    HARNESS_FAILED,
    Layout,
    Side,
    compile_failure,
    pair,
    refusal,
    refused_harness,
)
from memdoor.review.differential.rustfunctions import MUT_METHOD
from memdoor.review.differential.seal import forged, head
from memdoor.sandbox.lang.rust_call import Unsupported

HARNESS = "__memdoor_harness"
"""The module of the harness's own code."""

_COMMON = r"""
fn __memdoor_json(s: &str) -> ::std::string::String {
    let mut o = ::std::string::String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&::std::format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
extern "C" {
    fn prctl(option: ::std::ffi::c_int, ...) -> ::std::ffi::c_int;
}
fn __memdoor_nonce() -> ::std::string::String {
    // The test's first line, read before the code under test runs; the input file keeps only the rest,
    // which standard input reads from its start (from a pipe, only that line is read). The process is made
    // non-dumpable first (PR_SET_DUMPABLE 0): its /proc/self/mem is then root's, which safe Rust of the code
    // under test, not root in its user namespace, cannot open to read the nonce.
    unsafe { prctl(4, 0 as ::std::ffi::c_ulong) };
    use ::std::io::{Read, Seek, Write};
    use ::std::os::unix::io::AsFd;
    let mut input = match ::std::io::stdin().as_fd().try_clone_to_owned() {
        ::std::result::Result::Ok(fd) => ::std::fs::File::from(fd),
        ::std::result::Result::Err(_) => return ::std::string::String::new(),
    };
    let mut line = ::std::vec::Vec::new();
    if input.metadata().map(|m| m.is_file()).unwrap_or(false) {
        let mut all = ::std::vec::Vec::new();
        let _ = input.read_to_end(&mut all);
        let at = all.iter().position(|&b| b == b'\n').unwrap_or(all.len());
        let next = ::std::cmp::min(at + 1, all.len());
        line.extend_from_slice(&all[..at]);
        let kept = ::std::fs::OpenOptions::new().write(true).truncate(true).open("/proc/self/fd/0")
            .and_then(|mut f| f.write_all(&all[next..]));
        let _ = input.seek(::std::io::SeekFrom::Start(if kept.is_ok() { 0 } else { next as u64 }));
    } else {
        let mut byte = [0u8; 1];
        while let ::std::result::Result::Ok(1) = input.read(&mut byte) {
            if byte[0] == b'\n' { break; }
            line.push(byte[0]);
        }
    }
    ::std::string::String::from_utf8_lossy(&line).into_owned()
}
fn __memdoor_panic_text(p: &::std::boxed::Box<dyn ::std::any::Any + ::std::marker::Send>) -> ::std::string::String {
    p.downcast_ref::<&str>().map(|s| ::std::string::String::from(*s))
        .or_else(|| p.downcast_ref::<::std::string::String>().cloned()).unwrap_or_default()
}
"""

WRAPPER = r"""
trait __MemdoorEnd { fn __memdoor_end(self) -> ::std::string::String; }
impl __MemdoorEnd for () {
    fn __memdoor_end(self) -> ::std::string::String { ::std::string::String::from("exit status 0") }
}
impl<E: ::std::fmt::Debug> __MemdoorEnd for ::std::result::Result<(), E> {
    fn __memdoor_end(self) -> ::std::string::String {
        match self {
            ::std::result::Result::Ok(()) => ::std::string::String::from("exit status 0"),
            ::std::result::Result::Err(e) => ::std::format!("main returned Err({:?})", e),
        }
    }
}
impl __MemdoorEnd for ::std::process::ExitCode {
    fn __memdoor_end(self) -> ::std::string::String { ::std::format!("{:?}", self) }
}
pub(crate) fn main() {
    let __memdoor_n = __memdoor_nonce();
    ::std::panic::set_hook(::std::boxed::Box::new(|_| {}));
    let ran = ::std::panic::catch_unwind(|| crate::__memdoor_main());
    let (end, message) = match ran {
        ::std::result::Result::Ok(v) => (__MemdoorEnd::__memdoor_end(v), ::std::string::String::new()),
        ::std::result::Result::Err(p) => (::std::string::String::from("panic"), __memdoor_panic_text(&p)),
    };
    let _ = ::std::io::Write::flush(&mut ::std::io::stdout());
    let m: ::std::string::String = message.chars().take(MAX_TEXT).collect();
    ::std::println!("\n{}{} {{\"k\": \"exit\", \"t\": {}, \"m\": {}}}", MARK_TEXT, __memdoor_n, __memdoor_json(&end), __memdoor_json(&m));
}
"""


def _harness(old: str, new: str, side: Side, body: str) -> str:
    """``side``'s harness: the pair of files (:func:`.rust_pair.pair`), then our code in a module of its own,
    where no item, trait or ``use`` of the files is in scope, every path is absolute (``::std::...``: a
    ``macro_rules! println`` of a file, textually before it, is never the one called) and the files' items
    are named by ``crate::``; then the ``main`` that calls ours. A pair :func:`.rust_pair.refusal` refuses is
    only a harness that does not compile, saying why."""
    if (why := refusal(old, new)) is not None:
        return refused_harness(why)
    code = (_COMMON + body).replace("MAX_TEXT", str(MAX_TEXT)).replace("MARK_TEXT", json.dumps(MARK))
    return (
        f"{pair(old, new, side)}\n#[allow(warnings, unused_qualifications)]\n"
        f"mod {HARNESS} {{\nuse ::std::prelude::rust_2021::*;\n{code}}}\n"
        f"#[allow(warnings, unused_qualifications)]\nfn main() {{ crate::{HARNESS}::main() }}\n"
    )


def wrap_program(old: str, new: str, side: Side) -> str:
    """``side``'s program with its ``main`` renamed and ours after it (the other version compiled beside it)."""
    return _harness(old, new, side, WRAPPER)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _not_compiled(result: TestResult, where: Layout) -> CallOutcome:
    text = compile_failure((result.detail or "").strip(), where)
    return CallOutcome.not_compiled(text[:MAX_TEXT])


def read_rust(result: TestResult, nonce: str, where: Layout) -> CallOutcome:
    """The outcome of one run of the wrapped program, read as untrusted data: its end from the last line
    with the test's ``nonce``; a line with another nonce-shaped value makes it :meth:`CallOutcome.forged`
    (:func:`.seal.forged`: one guess); any other line is what the program printed."""
    detail = (result.detail or "").strip()
    if result.status == "compile_error":
        return _not_compiled(result, where)
    if result.status == "time_limit":
        return CallOutcome(kind="timeout")
    if result.status == "memory_limit":
        return CallOutcome(kind="memory")
    if result.status != "passed":
        status = re.match(r"exit status (-?\d+)", detail)
        if status is None:
            return CallOutcome(kind="crash", text=f"{result.status}: {detail}"[:MAX_TEXT])
        return CallOutcome(kind="exit", type=f"exit status {status.group(1)}", text="")
    out = result.output or ""
    if forged(out, nonce):
        return CallOutcome.forged()
    mark = "\n" + head(nonce)
    at = out.rfind(mark)
    end, message = "exit status 0", ""
    if at >= 0:
        try:
            data = json.loads(out[at + len(mark) :].split("\n", 1)[0])
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("t"), str):
            end = data["t"][:200]
            message = str(data.get("m", ""))[:MAX_TEXT]
        out = out[:at]
    return CallOutcome(kind="exit", type=end, text=out[:MAX_TEXT], digest=_digest(out), message=message)


CALLS = r"""
struct __MemdoorValue<T>(T);
trait __MemdoorDebug { fn __memdoor_show(&self) -> (::std::string::String, &'static str); }
impl<T: ::std::fmt::Debug> __MemdoorDebug for &__MemdoorValue<T> {
    fn __memdoor_show(&self) -> (::std::string::String, &'static str) {
        (::std::format!("{:?}", self.0), ::std::any::type_name::<T>())
    }
}
trait __MemdoorNoDebug { fn __memdoor_show(&self) -> (::std::string::String, &'static str); }
impl<T> __MemdoorNoDebug for __MemdoorValue<T> {
    fn __memdoor_show(&self) -> (::std::string::String, &'static str) {
        (::std::format!("<{} without Debug>", ::std::any::type_name::<T>()), ::std::any::type_name::<T>())
    }
}
fn __memdoor_report(
    nonce: &str,
    f: impl ::std::ops::FnOnce() -> (::std::string::String, &'static str) + ::std::panic::UnwindSafe,
) {
    ::std::panic::set_hook(::std::boxed::Box::new(|_| {}));
    let line = match ::std::panic::catch_unwind(f) {
        ::std::result::Result::Ok((text, type_name)) => {
            let mut h = ::std::collections::hash_map::DefaultHasher::new();
            ::std::hash::Hasher::write(&mut h, text.as_bytes());
            let digest = ::std::format!("{:016x}{}", ::std::hash::Hasher::finish(&h), text.len());
            let cut: ::std::string::String = text.chars().take(MAX_TEXT).collect();
            ::std::format!("{{\"k\": \"return\", \"t\": {}, \"r\": {}, \"h\": {}}}",
                __memdoor_json(type_name), __memdoor_json(&cut), __memdoor_json(&digest))
        }
        ::std::result::Result::Err(p) => {
            let cut: ::std::string::String = __memdoor_panic_text(&p).chars().take(MAX_TEXT).collect();
            ::std::format!("{{\"k\": \"raise\", \"t\": \"panic\", \"r\": {}}}", __memdoor_json(&cut))
        }
    };
    ::std::println!("\n{}{} {}", MARK_TEXT, nonce, line);
}
fn __memdoor_refused(nonce: &str, why: &str) {
    ::std::println!("\n{}{} {{\"k\": \"import\", \"t\": \"unsupported input\", \"r\": {}}}", MARK_TEXT, nonce, __memdoor_json(why));
}
pub(crate) fn main() {
    let __memdoor_n = __memdoor_nonce();
    let mut s = ::std::string::String::new();
    let _ = ::std::io::Read::read_to_string(&mut ::std::io::stdin(), &mut s);
    match s.trim() {
ARMS
        _ => __memdoor_refused(&__memdoor_n, "no such call"),
    }
}
"""


def _call(name: str, arguments: str) -> str:
    """The closure's body that calls the target ``name`` (an item of the file, named by ``crate::`` from the
    harness's module) and shows its result; a ``&mut self`` method's (:data:`.rustfunctions.MUT_METHOD`) on
    a value kept, shown after the call too."""
    m = MUT_METHOD.fullmatch(name)
    if m is None:
        return f"(&&__MemdoorValue(crate::{name}({arguments}))).__memdoor_show()"
    owner, method = m.groups()
    return (
        f"{{ let mut __s = crate::{owner}::default(); "
        f"let (__r, __t) = (&&__MemdoorValue(__s.{method}({arguments}))).__memdoor_show(); "
        f'(::std::format!("{{}} (self after: {{}})", __r, (&&__MemdoorValue(&__s)).__memdoor_show().0), __t) }}'
    )


def function_harness(
    old: str, new: str, side: Side, calls: list[tuple[int, str, list[str], list[Any]]]
) -> str:
    """``side``'s file with a ``main`` of ours (its own renamed) that makes call ``k`` when standard input
    is ``k``: ``calls`` holds ``(k, function, parameter types, JSON arguments)``. An argument that cannot be
    written as a literal of its type makes that call report it (the same on both versions)."""
    arms = []
    for k, name, types, args in calls:
        try:
            text = ", ".join(arguments(name, types, args))
            arms.append(f'        "{k}" => __memdoor_report(&__memdoor_n, || {_call(name, text)}),')
        except Unsupported as e:
            arms.append(f'        "{k}" => __memdoor_refused(&__memdoor_n, {json.dumps(str(e)[:200])}),')
    return _harness(old, new, side, CALLS.replace("ARMS", "\n".join(arms)))


def read_rust_call(result: TestResult, nonce: str, where: Layout) -> CallOutcome:
    """The outcome of one call of the function harness (a version that does not compile cannot be called)."""
    if result.status == "compile_error":
        return _not_compiled(result, where)
    return outcome(result, nonce, last=True)


def harness_failed(o: CallOutcome) -> bool:
    """Whether a call of the function harness could not run because the harness's own code (not the base or
    the changed file) did not compile: as the sandbox's status says, not a line the code under test printed."""
    return o.did_not_compile and o.text.startswith(HARNESS_FAILED)
