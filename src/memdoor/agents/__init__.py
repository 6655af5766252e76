"""The team layer: agents and teams (``team``) and the call context an agent's call
needs (``calls``: budget, ledger, trace, price, events)."""
