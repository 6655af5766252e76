"""Harness part 8, the process: start-up, limits, the job, the check process's fork, and the test loop.

``main`` boots the interpreter, reads the job (``read_job``, forking the check job's program process
before its tests are read), sets the limits and streams one result per test. A fragment of the harness
program, never imported: see ``memdoor.sandbox.harness``."""

# ruff: noqa: F821
# ---- the harness program's text, from the next line on ----


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
