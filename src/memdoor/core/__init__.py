"""Shared types and ports: errors, ledger, budget, trace, problems, verdicts, candidates,
messages, the Solution, the ports (protocols) and the registry. Imports nothing of memdoor outside core."""
