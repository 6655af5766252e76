"""Harness part 2, the wire: what the harness sends for a candidate.

Frames on the result pipe (``Channel``), a candidate's output captured within a cap (``CappedStdout``,
``finish``), an exception in one short line (``describe``, ``error_status``) and the exact encoding of a
returned value (``encode``). A fragment of the harness program, never imported: see
``memdoor.sandbox.harness``."""

# ruff: noqa: F821
# ---- the harness program's text, from the next line on ----


class OutputLimit(BaseException):
    """Raised into the candidate when it writes more than the cap."""


class Channel:
    def __init__(self, fd):
        self.fd = fd

    def send(self, header, payload=b""):
        head = _dumps(header).encode()
        view = memoryview(_pack(len(head), len(payload)) + head + payload)
        while view:
            view = view[_write(self.fd, view) :]


class CappedStdout(io.StringIO):
    """A StringIO that stops growing past ``cap`` characters and remembers that it overflowed."""

    def __init__(self, cap):
        super().__init__()
        self.cap = cap
        self.size = 0
        self.overflow = False

    def write(self, s):
        if self.overflow:
            raise OutputLimit
        n = super().write(s)
        self.size += n
        if self.size > self.cap:
            self.overflow = True
            raise OutputLimit
        return n

    def writelines(self, lines):
        for line in lines:
            self.write(line)


def finish(status, detail, out, cap):
    """A stdin test's result: the captured text as UTF-8, or nothing and the overflow flag past ``cap`` bytes."""
    data = out.getvalue().encode("utf-8", "surrogatepass")
    if out.overflow or len(data) > cap:
        return status, detail, b"", True
    return status, detail, data, False


def describe(e):
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 300 else text[:300] + "..."


def error_status(e):
    return "memory_limit" if isinstance(e, MemoryError) else "runtime_error"


# ---------------------------------------------------------------- exact encoding of returned values
_BIG = 1 << 9000
_DICT_LIKE = ("collections.Counter", "collections.OrderedDict", "collections.defaultdict")


def encode(v, sets=False):
    """A JSON-able form of ``v`` that the supervisor decodes to an object equal exactly when ``v`` is.

    JSON objects never stand for dicts: every JSON object is a tag (``$dict``, ``$tuple``, ...). With
    ``sets``, sets and frozensets are carried exactly too (``$set``, ``$frozenset``: only ``decode`` below
    reads them; functional results keep them opaque, as no JSON expected value is a set).
    """
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v if -_BIG < v < _BIG else {"$int": hex(v)}
    if t is float:
        return v if math.isfinite(v) else {"$float": repr(v)}
    if t is list:
        return [encode(x, sets) for x in v]
    if t is tuple:
        return {"$tuple": [encode(x, sets) for x in v]}
    if t is dict:
        return {"$dict": [[encode(k, sets), encode(x, sets)] for k, x in v.items()]}
    if sets and (t is set or t is frozenset):
        return {"$" + t.__name__: [encode(x, sets) for x in v]}
    name = f"{t.__module__}.{t.__qualname__}"
    if name.startswith("numpy.") and getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
        return encode(v.item(), sets)  # a numpy scalar compares like the Python number it holds
    if name == "numpy.ndarray":  # == is elementwise; only a one-element result has a truth value
        item = encode(v.item(), sets) if v.size == 1 else None
        return {"$ndarray": item, "size": int(v.size), "repr": repr(v)[:2000]}
    if name == "fractions.Fraction":
        return {"$fraction": [encode(v.numerator), encode(v.denominator)]}
    if name == "decimal.Decimal":
        return {"$decimal": str(v)}
    if t is complex:
        return {"$complex": [encode(v.real), encode(v.imag)]}
    # Subclasses of the plain types compare like their base when they keep its __eq__ (IntEnum,
    # namedtuple) or are the standard dict subclasses whose __eq__ defers to dict against a plain dict.
    for base in (int, float, str, list, tuple, dict):
        if isinstance(v, base):
            if t.__eq__ is base.__eq__ or name in _DICT_LIKE:
                return encode(base(v), sets)
            break
    try:
        if isinstance(v, (set, frozenset)):
            text = "{" + ", ".join(sorted(repr(x) for x in v)) + "}"
        else:
            text = repr(v)
    except BaseException:
        text = "<unrepresentable>"
    return {"$opaque": name, "repr": text[:2000]}
