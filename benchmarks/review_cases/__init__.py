"""The review benchmark's cases (issue 43, "The benchmark"): changes of HumanEval functions whose kind —
a bug the public tests miss or catch, a refactoring, an intended behaviour change, or an intended change
with a bug beside it — is decided by hidden tests run in the sandbox, never shown to the review.

Modules: ``source`` (the functions), ``mutants``, ``refactors`` and ``intents`` (candidate changes),
``checks`` (what decides them, and the public test file), ``build`` (deciding and choosing the cases),
``repo`` (a case as a git repository, diff and description), ``listing`` (the dry run's print-out).
"""
