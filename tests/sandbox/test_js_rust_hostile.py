"""Hostile JavaScript and Rust candidates (issue 14 item 1): each gets a non-passing verdict or passes
harmlessly; nothing outside the sandbox changes, no process survives, nothing secret leaks (at run time, or
at Rust's compile time), and the grader grades the next candidate correctly. The only network address used
is 127.0.0.1."""

from __future__ import annotations

import resource
import socket
import uuid
from pathlib import Path

import pytest
from test_sandbox_hostile import sleeper_marker, wait_gone

from memdoor.core.problem import TestCase
from memdoor.sandbox import SandboxConfig, open_sandbox
from memdoor.sandbox.lang.run import run_program, tool_for

pytestmark = pytest.mark.skipif(
    not (tool_for("javascript").usable and tool_for("rust").usable),
    reason="node or the sandbox's Rust toolchain (scripts/install_rust.sh) is missing",
)

ADD = {
    "javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(' ').map(Number);\n"
    "console.log(a * b);",
    "rust": "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s)"
    ".unwrap(); let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); "
    'println!("{}", v[0] * v[1]); }',
}


def once(expected: str | None = None) -> list[TestCase]:
    return [TestCase(kind="stdin", input="\n", output=expected)]


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def sb(request):
    """Every hostile program runs under both isolation tools (unshare is the fallback without bubblewrap)."""
    with open_sandbox(SandboxConfig(isolation=request.param, timeout_s=3.0, prestart=False)) as s:
        yield s


def assert_healthy(sb, language: str) -> None:
    v = run_program(sb, language, ADD[language], [TestCase(kind="stdin", input="6 7\n", output="42\n")])
    assert v.passed, v


def output(sb, language: str, code: str) -> str:
    v = run_program(sb, language, code, once())
    assert v.passed, v
    return v.tests[0].output


LOOPS = {
    "javascript": ["while (true) {}", "setInterval(() => {}, 1000);"],
    "rust": [
        "fn main() { loop {} }",
        "fn main() { std::thread::sleep(std::time::Duration::from_secs(100000)); }",
    ],
}


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_loops_and_sleeps_are_time_limits(sb, language):
    for code in LOOPS[language]:
        assert run_program(sb, language, code, once("1")).status == "time_limit"
    assert_healthy(sb, language)


MEMORY = {
    "javascript": [
        "const b = Buffer.alloc(3 * 1024 * 1024 * 1024, 1); console.log(b.length);",
        "const xs = []; while (true) xs.push(Buffer.alloc(50 << 20, 1));",
    ],
    "rust": [
        'fn main() { let v = vec![1u8; 3 << 30]; println!("{}", v.iter().map(|&x| x as u64).sum::<u64>()); }',
        "fn main() { let mut xs = Vec::new(); loop { xs.push(vec![1u8; 50 << 20]); } }",
    ],
}


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_memory_hogs_are_stopped(sb, language):
    for code in MEMORY[language]:
        v = run_program(sb, language, code, once("1"))
        # the limit (or, on a busy machine, the clock) stops it: never a pass
        assert v.status in ("memory_limit", "runtime_error", "time_limit"), v
    assert_healthy(sb, language)


def storm(language: str, marker: str) -> str:
    if language == "javascript":
        return (
            "const cp = require('child_process');\n"
            "for (let i = 0; i < 5000; i++) { try { cp.spawn('/usr/bin/sleep', ['" + marker + "'], "
            "{ detached: true, stdio: 'ignore' }).on('error', () => {}); } catch (e) {} }\nwhile (true) {}"
        )
    return (
        'fn main() { for _ in 0..5000 { let _ = std::process::Command::new("/usr/bin/sleep")'
        f'.arg("{marker}").spawn(); }} loop {{}} }}'
    )


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_fork_storm_is_contained_and_reaped(sb, language):
    marker = sleeper_marker()
    v = run_program(sb, language, storm(language, marker), once("1"))
    assert not v.passed
    assert wait_gone(marker) == []
    assert_healthy(sb, language)


def daemon(language: str, marker: str) -> str:
    shell = f"setsid /usr/bin/sleep {marker} </dev/null >/dev/null 2>&1 &"
    if language == "javascript":
        return f"require('child_process').execFileSync('/bin/sh', ['-c', '{shell}']);\nconsole.log(42);"
    return f'fn main() {{ std::process::Command::new("/bin/sh").arg("-c").arg("{shell}").status().unwrap(); println!("42"); }}'


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_double_forked_daemon_is_reaped(sb, language):
    marker = sleeper_marker()
    v = run_program(sb, language, daemon(language, marker), once("42\n"))
    assert v.passed, v  # it did its job, harmlessly...
    assert wait_gone(marker) == []  # ...and its daemon did not outlive it


FLOODS = {
    "javascript": [
        "const s = 'x'.repeat(65536); while (true) process.stdout.write(s);",
        "const s = 'z'.repeat(65536); while (true) process.stderr.write(s);",
    ],
    "rust": [
        "use std::io::Write;\nfn main() { let s = [b'x'; 65536]; let mut o = std::io::stdout(); loop { o.write_all(&s).unwrap(); } }",
        "use std::io::Write;\nfn main() { let s = [b'z'; 65536]; loop { std::io::stderr().write_all(&s).unwrap(); } }",
    ],
}


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_output_floods_are_capped(sb, language):
    config = SandboxConfig(isolation=sb.name, timeout_s=3.0, max_output_bytes=1 << 20, prestart=False)
    with open_sandbox(config) as small:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        # node queues a write in its own memory once the pipe is full (its loop never yields to drain it), so
        # whichever comes first stops it: the output cap, the clock or the memory limit; never a pass
        stopped_by = {"wrong_answer", "time_limit", "runtime_error"} | (
            {"memory_limit"} if language == "javascript" else set()
        )
        for code in FLOODS[language]:
            v = run_program(small, language, code, once("x"))
            assert v.status in stopped_by, v
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert grown_mb < 150, f"the grader grew by {grown_mb:.0f} MiB"
        assert_healthy(small, language)


KILLS = {
    "javascript": [
        "try { process.kill(process.ppid, 'SIGKILL'); } catch (e) {}",
        "try { process.kill(-1, 'SIGKILL'); } catch (e) {}",
        "try { process.kill(1, 'SIGKILL'); } catch (e) {}",
        "require('child_process').spawnSync('/bin/sh', ['-c', 'kill -9 $PPID; kill -9 -1; kill -9 1']);",
    ],
    "rust": [
        'fn main() { let _ = std::process::Command::new("/bin/sh").arg("-c")'
        '.arg("kill -9 $PPID; kill -9 -1; kill -9 1").status(); println!("42"); }',
        "fn main() { std::process::abort(); }",
    ],
}


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_killing_the_parent_or_itself(sb, language):
    for attack in KILLS[language]:
        code = attack + ("\nconsole.log(42);" if language == "javascript" else "")
        v = run_program(sb, language, code, once("42\n"))
        assert v.status in ("runtime_error", "passed"), v  # a kill that failed lets it print 42, harmlessly
        assert_healthy(sb, language)


def connect(language: str, port: int) -> str:
    if language == "javascript":
        return (
            f"const s = require('net').connect({port}, '127.0.0.1');\n"
            "s.on('connect', () => { console.log('connected'); s.end(); });\n"
            "s.on('error', (e) => console.log('blocked', e.code));"
        )
    return (
        f'fn main() {{ match std::net::TcpStream::connect("127.0.0.1:{port}") {{ '
        'Ok(_) => println!("connected"), Err(e) => println!("blocked {:?}", e.kind()) } }'
    )


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_no_network_even_to_loopback(sb, language):
    with socket.create_server(("127.0.0.1", 0)) as server:
        out = output(sb, language, connect(language, server.getsockname()[1]))
        assert "blocked" in out and "connected" not in out
        server.settimeout(0.2)
        with pytest.raises(TimeoutError):
            server.accept()


SNOOP = {
    "javascript": "const fs = require('fs'); const found = [JSON.stringify(process.env)];\n"
    "for (const pid of fs.readdirSync('/proc')) { for (const what of ['environ', 'cmdline']) {\n"
    "  try { found.push(fs.readFileSync('/proc/' + pid + '/' + what, 'latin1')); } catch (e) {} } }\n"
    "console.log(Object.keys(process.env).sort().join(',')); console.log(found.join('\\n'));",
    "rust": 'fn main() { println!("{}", std::env::vars().map(|(k, _)| k).collect::<Vec<_>>().join(","));\n'
    'for (k, v) in std::env::vars() { println!("{}={}", k, v); }\n'
    'for e in std::fs::read_dir("/proc").unwrap().flatten() { for what in ["environ", "cmdline"] {\n'
    '  if let Ok(b) = std::fs::read(e.path().join(what)) { println!("{}", String::from_utf8_lossy(&b)); } } } }',
}


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_secrets_of_the_parent_are_not_visible(sb, language, monkeypatch):
    token = "memdoor-secret-" + uuid.uuid4().hex
    monkeypatch.setenv("MEMDOOR_TEST_SECRET_KEY", token)
    monkeypatch.setenv("OPENAI_API_KEY", token)
    out = output(sb, language, SNOOP[language])
    assert token not in out
    names = set(out.splitlines()[0].split(","))
    assert names <= {"PATH", "HOME"}


def test_rust_compile_time_reads_see_nothing_secret(sb, monkeypatch, tmp_path):
    token = "memdoor-secret-" + uuid.uuid4().hex
    monkeypatch.setenv("OPENAI_API_KEY", token)
    secret = tmp_path / "readable.txt"
    secret.write_text(token)
    secret.chmod(0o644)
    tmp_path.chmod(0o755)
    # the compiler's own environment, as the program sees it at compile time
    code = 'const E: &[u8] = include_bytes!("/proc/self/environ");\nfn main() { println!("{}", String::from_utf8_lossy(E)); }'
    out = output(sb, "rust", code)
    assert token not in out and "PATH=" in out
    v = run_program(
        sb, "rust", f'const S: &str = include_str!("{secret}");\nfn main() {{ println!("{{}}", S); }}', once()
    )
    assert v.status == "compile_error" and token not in v.tests[0].detail


def files_attack(language: str, victim: Path, repo_file: Path, new_file: Path, readable: Path) -> str:
    writes = [str(victim), str(repo_file), str(new_file), "/usr/memdoor-pwned", "/memdoor-pwned"]
    if language == "javascript":
        return (
            "const fs = require('fs'); const r = [];\n"
            f"for (const p of {writes!r}) {{ try {{ fs.writeFileSync(p, 'pwned'); r.push('wrote ' + p); }} catch (e) {{ r.push('no ' + e.code); }}\n"
            "  try { fs.unlinkSync(p); r.push('removed ' + p); } catch (e) {} }\n"
            f"try {{ r.push(fs.readFileSync({str(readable)!r}, 'utf8')); }} catch (e) {{ r.push('noread ' + e.code); }}\n"
            "fs.writeFileSync('/tmp/own.txt', 'fine'); r.push(fs.readFileSync('/tmp/own.txt', 'utf8'));\n"
            "console.log(r.join('\\n'));"
        )
    items = ", ".join(f'"{w}"' for w in writes)
    return (
        "fn main() { let mut r = Vec::new();\n"
        f'for p in [{items}] {{ match std::fs::write(p, "pwned") {{ Ok(_) => r.push(format!("wrote {{}}", p)), '
        'Err(e) => r.push(format!("no {:?}", e.kind())) }\n'
        '  if std::fs::remove_file(p).is_ok() { r.push(format!("removed {}", p)); } }\n'
        f'match std::fs::read_to_string("{readable}") {{ Ok(s) => r.push(s), Err(e) => r.push(format!("noread {{:?}}", e.kind())) }}\n'
        'std::fs::write("/tmp/own.txt", "fine").unwrap(); r.push(std::fs::read_to_string("/tmp/own.txt").unwrap());\n'
        'println!("{}", r.join("\\n")); }'
    )


@pytest.mark.parametrize("language", ["javascript", "rust"])
def test_host_files_cannot_be_read_written_or_deleted(sb, language, tmp_path):
    victim_dir = tmp_path / "open-to-all"
    victim_dir.mkdir()
    victim_dir.chmod(0o777)
    victim = victim_dir / "victim.txt"
    victim.write_text("precious")
    victim.chmod(0o666)
    secret = "memdoor-file-secret-" + uuid.uuid4().hex
    readable = tmp_path / "readable.txt"
    readable.write_text(secret)
    readable.chmod(0o644)
    tmp_path.chmod(0o755)
    repo_file = Path(__file__)
    repo_text = repo_file.read_text()
    out = output(sb, language, files_attack(language, victim, repo_file, victim_dir / "new.txt", readable))
    assert victim.read_text() == "precious"
    assert sorted(p.name for p in victim_dir.iterdir()) == ["victim.txt"]
    assert repo_file.read_text() == repo_text
    assert not Path("/usr/memdoor-pwned").exists() and not Path("/memdoor-pwned").exists()
    assert "fine" in out and secret not in out


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("javascript", "console.log(process.getuid(), process.geteuid(), process.getgid());"),
        (
            "rust",
            'fn main() { let s = std::fs::read_to_string("/proc/self/status").unwrap(); '
            'for l in s.lines().filter(|l| l.starts_with("Uid:") || l.starts_with("Gid:")) { println!("{}", l); } }',
        ),
    ],
)
def test_runs_as_an_unprivileged_user(sb, language, code):
    ids = [int(x) for x in output(sb, language, code).replace("Uid:", " ").replace("Gid:", " ").split()]
    assert ids and all(i != 0 for i in ids)


def test_rust_compile_time_memory_bomb_is_stopped(sb):
    # a 4 GiB static: the compiler itself runs out of the compile step's memory, inside the sandbox
    code = 'static X: [u8; 1 << 32] = [1; 1 << 32];\nfn main() { println!("{}", X[5]); }'
    v = run_program(sb, "rust", code, once("1"))
    assert v.status in ("memory_limit", "compile_error", "time_limit"), v
    assert_healthy(sb, "rust")
