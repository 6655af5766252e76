"""The environment git runs in for the review (repo.hardened_env): no transport the repository could
turn into a program."""

from __future__ import annotations

import pytest
from review_helpers import BUGGY, git

from memdoor.core.errors import ReviewInputError
from memdoor.review.gitrange import read_range


@pytest.fixture
def ranged(repo):
    (repo / "calc.py").write_text(BUGGY)
    git(repo, "commit", "-qam", "change")
    return repo


def test_a_promisor_remote_of_the_repository_is_never_fetched_from(ranged, tmp_path):
    """A partial clone whose promisor's url is ``ext::`` (allowed by the repository's own config) and a
    missing object: git would fetch it lazily, running the url's command."""
    marker = tmp_path / "ran"
    for key, value in [
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "evil"),
        ("remote.evil.promisor", "true"),
        ("remote.evil.url", f"ext::sh -c touch% {marker}% >&2"),
        ("protocol.ext.allow", "always"),
    ]:
        git(ranged, "config", key, value)
    blob = git(ranged, "rev-parse", "HEAD:calc.py").strip()
    (ranged / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(ReviewInputError) as e:
        read_range(ranged, "HEAD~1", "HEAD", 1_000_000)
    assert "\n" not in str(e.value)
    assert not marker.exists()
