"""Decoding LiveCodeBench's compressed tests without ever unpickling anything but a plain string."""

from __future__ import annotations

import io
import pickle
import pickletools

# Opcodes that can only build a str (plus framing/memo bookkeeping). Anything else — globals,
# reduce, build, persistent ids, containers — is refused before unpickling starts.
_ALLOWED_OPCODES = frozenset(
    {
        "PROTO",
        "FRAME",
        "STOP",
        "MEMOIZE",
        "PUT",
        "BINPUT",
        "LONG_BINPUT",
        "SHORT_BINUNICODE",
        "BINUNICODE",
        "BINUNICODE8",
        "UNICODE",
    }
)


class _StrOnlyUnpickler(pickle.Unpickler):
    def find_class(
        self, module: str, name: str
    ):  # never reached with the opcode check, kept as a second lock
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refusing persistent ids")


def loads_str(data: bytes) -> str:
    """Unpickle ``data`` if and only if it is a pickled ``str``; ValueError otherwise."""
    try:
        ops = [op.name for op, _arg, _pos in pickletools.genops(data)]
    except Exception as e:  # pickletools raises ValueError and others on garbage
        raise ValueError(f"not a pickle: {e}") from None
    bad = sorted(set(ops) - _ALLOWED_OPCODES)
    if bad:
        raise ValueError(f"pickle holds more than a plain string (opcodes {', '.join(bad)})")
    try:
        value = _StrOnlyUnpickler(io.BytesIO(data)).load()
    except Exception as e:
        raise ValueError(f"bad pickle: {e}") from None
    if not isinstance(value, str):
        raise ValueError(f"pickle holds a {type(value).__name__}, not a string")
    return value
