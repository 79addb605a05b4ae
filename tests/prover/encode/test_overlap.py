"""The syntactic overlap filter never separates endpoints that can share a connection."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prover.encode.automata import compare, host_elements
from prover.encode.overlap import EndpointIndex, endpoints_may_overlap, hosts_may_overlap
from tests.prover.encode.helpers import endpoint

LABELS = st.sampled_from(["a", "b", "ab", "*", "**", "a*", "*b", "svc1", "svc2"])
hosts = st.lists(LABELS, min_size=1, max_size=4).map(".".join)


@settings(max_examples=300, deadline=None)
@given(left=hosts, right=hosts)
def test_hosts_said_disjoint_really_are(left: str, right: str) -> None:
    if not hosts_may_overlap(left, right):
        comparison = compare(host_elements(left), host_elements(right))
        assert comparison is not None and not comparison.both


@settings(max_examples=100, deadline=None)
@given(
    patterns=st.lists(
        st.tuples(hosts, st.sets(st.sampled_from([80, 443]), min_size=1)), max_size=8
    ),
    query=hosts,
    ports=st.sets(st.sampled_from([80, 443]), min_size=1),
)
def test_the_index_finds_every_endpoint_the_pairwise_filter_keeps(
    patterns: list[tuple[str, set[int]]], query: str, ports: set[int]
) -> None:
    endpoints = [((i, 0), endpoint(h, sorted(p))) for i, (h, p) in enumerate(patterns)]
    probe = endpoint(query, sorted(ports))
    expected = [ref for ref, e in endpoints if endpoints_may_overlap(probe, e)]
    assert EndpointIndex(endpoints).overlapping(query, ports) == expected


def test_wildcards_under_different_parents_are_separated() -> None:
    assert not hosts_may_overlap("*.svc1.example.com", "*.svc2.example.com")
    assert not hosts_may_overlap("api.example.com", "*.other.com")
    assert hosts_may_overlap("*.example.com", "**.com")
    assert hosts_may_overlap("api*.example.com", "*i.example.com")
    assert not endpoints_may_overlap(endpoint("a.com", [80]), endpoint("a.com", [443]))
