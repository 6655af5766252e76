"""How memory entries and values are stored: JSON text, the same for every backend.

Both backends store JSON, so a value read back is what ``json.loads(json.dumps(value))`` gives
(tuples become lists, keys become strings) whichever backend holds it, and a later change to
the caller's dict never changes what was stored.
"""

from __future__ import annotations

import json
from typing import Any

from memdoor.core.errors import MemoryStoreError


def encode(value: Any) -> str:
    """JSON text of ``value``. A value JSON cannot hold raises TypeError/ValueError (a caller's bug)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_entry(entry: dict[str, Any]) -> str:
    """JSON text of a log entry or final answer, which must be a dict."""
    if not isinstance(entry, dict):
        raise TypeError(f"memory entries are dicts, not {type(entry).__name__}")
    return encode(entry)


def decode(text: str | bytes, where: str) -> Any:
    """The value stored as ``text``; MemoryStoreError naming ``where`` if it is not JSON."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise MemoryStoreError(f"memory store holds unreadable data at {where}: {e}") from e
