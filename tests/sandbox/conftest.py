"""Sandboxes of the sandbox tests: the shared ``sandbox`` and ``quick_sandbox`` fixtures of tests/conftest.py
(real isolation: bwrap here); the hostile suite parametrizes its own over both isolation tools."""
