"""Choosing among candidates: execution filtering, behaviour groups, votes, confidence."""
