"""Which findings a review's exit code counts (``--fail-on``, ``--fail-on-unverified``): one rule, used by
:meth:`memdoor.review.session.ReviewReport.fails` and by the review benchmark's scoring.

A finding counts at its own severity when it is verified (an execution reproduced it), or, with
unverified findings counted, always; then the reading review's consensus findings merged into it
(``also_read``, :mod:`memdoor.review.corroborate`) count at their own severity too, as they would have
unmerged. A merged minority finding never counts (unmerged, it was no consensus finding).

    merged = [(a.severity, a.consensus) for a in g.also_read]
    at_or_above(counted_severities(g.severity, g.verified, merged, unverified=True), "high")
"""

from __future__ import annotations

from collections.abc import Iterable

from memdoor.review.findings import SEVERITIES, severity_rank


def counted_severities(
    severity: str, verified: bool, also_read: Iterable[tuple[str, bool]], *, unverified: bool
) -> list[str]:
    """The severities one reported finding counts at. ``also_read``: (severity, consensus) of each reading
    finding merged into it; ``unverified``: whether unverified findings count."""
    if unverified:
        return [severity, *(s for s, consensus in also_read if consensus)]
    return [severity] if verified else []


def at_or_above(severities: Iterable[str], bar: str) -> bool:
    """Whether any of ``severities`` is ``bar`` or worse (a severity not in :data:`SEVERITIES` is none)."""
    return any(s in SEVERITIES and severity_rank(s) >= severity_rank(bar) for s in severities)
