"""Host-glob intersection, against the concrete host matcher on every short host."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.concrete.glob import host_matches
from prover.extended.hosts import ANY_HOST, hosts_intersect

ALPHABET = "ab."
HOSTS = ["".join(p) for n in range(6) for p in itertools.product(ALPHABET, repeat=n)]
PATTERN_PIECES = st.sampled_from(["a", "b", ".", "*", "**"])


def _brute(first: str, second: str) -> bool:
    return any(host_matches(first, h) and host_matches(second, h) for h in HOSTS)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(PATTERN_PIECES, min_size=1, max_size=4).map("".join),
    st.lists(PATTERN_PIECES, min_size=1, max_size=4).map("".join),
)
def test_a_common_host_found_by_brute_force_is_found(first: str, second: str) -> None:
    # Hosts of up to five characters over {a, b, .} witness every intersection of
    # patterns this short; an intersection claimed without one would be a false overlap.
    if _brute(first, second):
        assert hosts_intersect(first, second)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("github.com", "*.githubusercontent.com", False),
        ("api.github.com", "*.github.com", True),
        ("github.com", "*.github.com", False),
        ("api*.example.com", "api.example.com", True),
        ("**.example.com", "a.b.example.com", True),
        ("*.example.com", "a.b.example.com", False),
        ("*.a.com", "x.*.com", True),
        ("a.com", "b.com", False),
        ("anything.org", ANY_HOST, True),
    ],
)
def test_known_pairs(first: str, second: str, expected: bool) -> None:
    assert hosts_intersect(first, second) is expected
    assert hosts_intersect(second, first) is expected


LONGER = ["".join(p) for n in range(8) for p in itertools.product(ALPHABET, repeat=n)]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(PATTERN_PIECES, min_size=1, max_size=3).map("".join),
    st.lists(PATTERN_PIECES, min_size=1, max_size=3).map("".join),
)
def test_a_claimed_intersection_has_a_common_host(first: str, second: str) -> None:
    # With at most three pieces a side, a shortest common host has at most seven
    # characters over {a, b, .}: an overlap without one would be a spurious conflict.
    if hosts_intersect(first, second):
        assert any(host_matches(first, h) and host_matches(second, h) for h in LONGER)
