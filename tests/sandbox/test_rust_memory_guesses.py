"""A Rust answer cannot pass by guessing the run's secret out of its own memory (``rust_report``): the process
is not dumpable, so safe std Rust cannot open ``/proc/self/mem``, and a completion-shaped line the harness
did not write (a wrong guess on stderr, any such line on stdout) fails the run. Real sandbox and rustc for
the graded answers."""

from __future__ import annotations

import pytest

from memdoor.judging.programs import grade
from memdoor.problems.humaneval_x import load_humaneval_x
from memdoor.sandbox.lang import rust_report
from memdoor.sandbox.lang.run import tool_for

rust_only = pytest.mark.skipif(
    not tool_for("rust").usable, reason="the sandbox's Rust toolchain (scripts/install_rust.sh) is missing"
)

# A security review's wrong answer to Rust/0 (it passed 3 of 3): the test names from /proc/self/exe, every
# 16 random-looking bytes of the binary's writable memory from /proc/self/mem written as a completion line
# for each name (one of them the secret), libtest's report forged on stdout, exit 0.
READS_ITS_MEMORY = r"""    forge_report();
    false
}

fn forge_report() {
    use std::io::{Read, Seek, SeekFrom, Write};
    let exe = std::fs::read("/proc/self/exe").unwrap_or_default();
    let mut names: Vec<String> = Vec::new();
    let ok = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b':';
    let hex = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c);
    for i in 0..exe.len().saturating_sub(18) {
        if exe[i] == b'_' && exe[i + 1] == b'm' && exe[i + 2..i + 18].iter().all(|&c| hex(c)) {
            let mut s = i;
            while s > 0 && ok(exe[s - 1]) { s -= 1; }
            let name = String::from_utf8_lossy(&exe[s..i + 18]).to_string();
            if let Some(k) = name.find("tests::") {
                let name = name[k..].to_string();
                if !names.contains(&name) { names.push(name); }
            }
        }
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut mem = std::fs::File::open("/proc/self/mem").unwrap();
    let mut cands: Vec<[u8; 16]> = Vec::new();
    let mut prev_bin = false;
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let is_bin = f.len() >= 6 && f[5] == "/tmp/bin";
        let anon_after = f.len() == 5 && prev_bin;
        prev_bin = is_bin;
        if !(f[1].starts_with("rw") && (is_bin || anon_after)) { continue; }
        let (a, b) = f[0].split_once('-').unwrap();
        let (a, b) = (u64::from_str_radix(a, 16).unwrap(), u64::from_str_radix(b, 16).unwrap());
        let mut buf = vec![0u8; (b - a) as usize];
        if mem.seek(SeekFrom::Start(a)).is_err() || mem.read_exact(&mut buf).is_err() { continue; }
        for w in buf.windows(16) {
            let mut seen = [false; 256];
            let distinct = w.iter().filter(|&&c| !std::mem::replace(&mut seen[c as usize], true)).count();
            let mut x = [0u8; 16];
            x.copy_from_slice(w);
            if distinct >= 13 && !cands.contains(&x) { cands.push(x); }
        }
    }
    let mut err = std::io::stderr().lock();
    for c in &cands {
        let h: String = c.iter().map(|b| format!("{:02x}", b)).collect();
        for n in &names { let _ = write!(err, "\n{} {} ok\n", h, n); }
    }
    let mut out = format!("\nrunning {} tests\n", names.len());
    for n in &names { out += &format!("test {} ... ok\n", n); }
    out += &format!("\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n", names.len());
    let _ = std::io::stdout().write_all(out.as_bytes());
    std::process::exit(0);
}
"""
# A right answer to Rust/0 that also writes a completion-shaped line of its own on ``{stream}``: its tests
# complete and the harness writes their real lines, so only the extra line can fail it.
RIGHT_WITH_A_LINE = r"""    let _ = std::io::Write::write_all(
        &mut std::io::{stream}(), b"\n0123456789abcdef0123456789abcdef tests::anything ok\n");
    for i in 0..numbers.len() {{
        for j in 0..numbers.len() {{
            if i != j && (numbers[i] - numbers[j]).abs() < threshold {{ return true; }}
        }}
    }}
    false
}}
"""


@pytest.fixture(scope="module")
def rust0():
    return {p.id: p for p in load_humaneval_x("rust")}["Rust/0"]


def test_one_guess_only_and_never_on_stdout():
    secret = bytes(range(16))
    real = b"\n" + secret.hex().encode() + b" tests::a ok\n"
    wrong = b"\n" + bytes(16).hex().encode() + b" tests::a ok\n"
    assert rust_report.foreign(b"", b"note\n" + real + b"end\n", secret) is None
    assert rust_report.foreign(b"running 1 test\n", real + real, secret) is None
    upper = b"\n" + secret.hex().upper().encode() + b" tests::a ok\n"  # never honoured: a wrong guess too
    for err in (wrong + real, real + wrong, upper + real, b"x" + wrong[:-1] + real):
        assert "not the run's secret" in rust_report.foreign(b"", err, secret), err
    assert "stdout holds a completion line" in rust_report.foreign(real, real, secret)
    # not completion-shaped: 31 or 33 digits, no trailing "ok", a value that is not hex
    for near in (
        b"\n" + b"a" * 31 + b" t ok\n",
        b"\n" + b"a" * 33 + b" t ok\n",
        wrong[:-4] + b"\n",
        b"\n" + b"g" * 32 + b" t ok\n",
    ):
        assert rust_report.foreign(near, near + real, secret) is None, near


@rust_only
def test_an_answer_reading_its_memory_for_the_secret_fails(sandbox, rust0):
    v = grade(rust0, READS_ITS_MEMORY, sandbox)
    assert not v.passed, v
    if sandbox.run_as_root or sandbox.name == "bwrap":  # the program is not root in its user namespace
        # /proc/self/mem is not the program's to open: its test panics there, as a wrong answer does
        assert v.status == "wrong_answer" and "PermissionDenied" in v.tests[0].detail, v
    else:  # unshare as a user: it reads its memory, but its wrong guesses fail the run
        assert v.status == "runtime_error" and "not the run's secret" in v.tests[0].detail, v


@rust_only
@pytest.mark.parametrize("stream", ["stderr", "stdout"])
def test_a_completion_line_of_the_program_s_own_fails_even_a_right_answer(sandbox, rust0, stream):
    assert grade(rust0, RIGHT_WITH_A_LINE.format(stream="sink"), sandbox).passed  # the answer is right
    v = grade(rust0, RIGHT_WITH_A_LINE.format(stream=stream), sandbox)
    assert v.status == "runtime_error" and "completion line" in v.tests[0].detail, v
