"""Candidates in other languages than Python (JavaScript, Rust), run in the same isolation as Python's."""
