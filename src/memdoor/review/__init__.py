"""Consensus code review of a diff (``memdoor review``): agents review it, what ⌈N/2⌉ agree on is reported,
and the patch of their suggestions is offered only with the result of the repository's tests in a sandbox.

One job per module: ``diff`` (parsing, refusing bad input), ``repo`` (git: where the diff applies, copies),
``context`` (what each agent sees, split per file), ``findings`` (the schema and parsing agents' answers),
``consensus`` (grouping and the ⌈N/2⌉ rule), ``patch`` (one patch of the consensus suggestions),
``testrun`` (the test command in an isolated copy), ``formats`` and ``sarif`` (outputs), ``session``
(one review run: calls, ledger, trace). See docs/review.md.
"""
