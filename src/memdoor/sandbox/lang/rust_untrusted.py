"""What in an untrusted Rust file could stand in for a harness compiled in the same crate (issue 43; issue 41,
class 6): the grader's test module (``rust_report``), the review's differential driver.

Such a harness relies on ``::std`` naming the standard library and on none of the file's code running before
the harness calls it. A file can break both:

- ``extern crate self as std;`` (or ``core``, ``alloc``) makes ``::std::assert_eq!``, ``::std::println!`` and
  ``::std::include!`` the file's own exported macros;
- ``#[used]`` with ``#[link_section = ".init_array"]`` runs a function before ``main``; ``#[no_mangle]`` or
  ``#[export_name]`` gives a function a name the linker prefers to libc's (``write``, ``exit``);
  ``global_asm!`` does either, so does ``asm!`` (its directives can put a function in ``.init_array``);
  ``#[global_allocator]`` runs while the runtime starts; ``#![no_main]`` replaces the entry point;
- ``include!`` compiles another file (the program again, the test code) where the harness cannot see it.

The names are read in :func:`rustscan.masked` text (one in a comment or a string does not count) as whole
words: stable Rust cannot build an identifier or an attribute's name from pieces, so any use of them writes
the word (``#[cfg_attr(all(), link_section = ...)]``, a macro's argument, ``r#link_section`` too).
"""

from __future__ import annotations

import re

from memdoor.sandbox.lang.rustscan import blank, masked

LINKAGE = re.compile(
    r"#\s*\[\s*(?:unsafe\s*\(\s*)?(?:no_mangle|used|(?:export_name|link_section)\b[^\]\n]{0,200})\s*\)?\s*\]"
)
"""The attributes that place an item where the linker or the runtime finds it, as written plainly."""
_REFUSED = re.compile(
    r"\b(no_mangle|export_name|link_section|no_main|global_asm|global_allocator)\b|\b(include)\s*!"
)
_ASM = re.compile(r"\b(asm|naked_asm)\b")
_EXTERN = re.compile(r"\bextern\b")
# what may follow ``extern``: an ABI, a block, a function, a crate (``extern crate name as alias;``)
_EXTERN_KNOWN = re.compile(r'\s*(?:"|fn\b|\{|crate\s+(\w+)\s*(?:as\s+(\w+)\s*)?;)')
_STANDARD = ("std", "core", "alloc")
_WHY = "{}, which could run code outside the calls or replace the harness's own"


def refused(src: str, *, linkage_blanked: bool) -> str | None:
    """What in ``src`` keeps it from being compiled with a harness (None: nothing). ``linkage_blanked``: the
    harness blanks the plainly written :data:`LINKAGE` attributes itself (the review's copies), so only other
    mentions of them count; otherwise (grading) those attributes and ``asm!`` are refused too."""
    text = masked(src)
    if linkage_blanked:
        text = LINKAGE.sub(lambda m: blank(m.group()), text)
    elif (m := LINKAGE.search(text) or _ASM.search(text)) is not None:
        return _WHY.format(" ".join(m.group().split()))
    if (m := _REFUSED.search(text)) is not None:
        return _WHY.format(m.group(1) or m.group(2) + "!")
    for m in _EXTERN.finditer(text):
        known = _EXTERN_KNOWN.match(text, m.end())
        if known is None or (known.group(2) in _STANDARD and known.group(2) != known.group(1)):
            return "an extern crate the harness cannot check (one named std, core or alloc stands in for it)"
    return None
