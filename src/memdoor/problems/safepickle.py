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
MAX_OPCODES = 16
"""A pickled str is PROTO, FRAME, one string, MEMOIZE, STOP: more opcodes are not a plain string."""


class _StrOnlyUnpickler(pickle.Unpickler):
    def find_class(
        self, module: str, name: str
    ):  # never reached with the opcode check, kept as a second lock
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refusing persistent ids")


def _check_opcodes(data: bytes) -> None:
    """ValueError unless ``data`` is a short run of string-only opcodes whose sizes fit in ``data``.

    Walked one opcode at a time (nothing is collected), and at most MAX_OPCODES of them, so the check
    costs no memory however long ``data`` is; pickletools refuses a string whose stated length runs
    past the end of the data, so the unpickler never trusts a length it cannot read.
    """
    ops = pickletools.genops(data)
    for count in range(1, MAX_OPCODES + 2):
        try:
            op, _arg, _pos = next(ops)
        except StopIteration:
            return
        except Exception as e:  # pickletools raises ValueError and others on garbage
            raise ValueError(f"not a pickle: {e}") from None
        if op.name not in _ALLOWED_OPCODES:
            raise ValueError(f"pickle holds more than a plain string (opcodes {op.name})")
        if count > MAX_OPCODES:
            raise ValueError(f"pickle holds more than a plain string (over {MAX_OPCODES} opcodes)")


def loads_str(data: bytes) -> str:
    """Unpickle ``data`` if and only if it is a pickled ``str``; ValueError otherwise."""
    _check_opcodes(data)
    try:
        value = _StrOnlyUnpickler(io.BytesIO(data)).load()
    except Exception as e:
        raise ValueError(f"bad pickle: {e}") from None
    if not isinstance(value, str):
        raise ValueError(f"pickle holds a {type(value).__name__}, not a string")
    return value
