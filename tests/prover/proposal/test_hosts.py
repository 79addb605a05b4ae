"""Host-pattern overlap (credential matching) and link-local / metadata recognition."""

from __future__ import annotations

import pytest

from prover.proposal.hosts import is_link_local_or_metadata, patterns_overlap


@pytest.mark.parametrize(
    ("left", "right", "overlap"),
    [
        ("api.github.com", "api.github.com", True),
        ("API.GitHub.com.", "api.github.com", True),
        ("*.github.com", "api.github.com", True),
        ("*.github.com", "github.com", False),
        ("*.github.com", "deep.api.github.com", False),
        ("**.github.com", "deep.api.github.com", True),
        ("**.github.com", "github.com", False),
        ("api-*.github.com", "api-v3.github.com", True),
        ("api-*.github.com", "web.github.com", False),
        ("*.s3.*.amazonaws.com", "bucket.s3.us-east-1.amazonaws.com", True),
        ("*.github.com", "api.*.com", True),
        ("a*b.example", "c*.example", False),
        ("a*b.example", "*c*.example", True),
        ("**.github.com", "**.com", True),
        ("**.a.com", "**.b.com", False),
        ("", "github.com", False),
        ("   ", "github.com", False),
    ],
)
def test_patterns_overlap_iff_some_host_matches_both(left: str, right: str, overlap: bool) -> None:
    assert patterns_overlap(left, right) is overlap
    assert patterns_overlap(right, left) is overlap


@pytest.mark.parametrize(
    ("host", "flagged"),
    [
        ("169.254.169.254", True),
        ("169.254.0.1", True),
        ("fe80::1", True),
        ("febf::1", True),
        ("::ffff:169.254.169.254", True),
        ("metadata.google.internal", True),
        ("METADATA.GOOGLE.INTERNAL.", True),
        ("*.google.internal", True),
        ("127.0.0.1", False),
        ("::1", False),
        ("10.0.0.1", False),
        ("metadata.google.internal.evil.com", False),
        ("api.github.com", False),
        ("", False),
    ],
)
def test_link_local_and_metadata_hosts(host: str, flagged: bool) -> None:
    assert is_link_local_or_metadata(host) is flagged
