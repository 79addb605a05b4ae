"""``networks_within`` against the definition: each candidate network is a subnet of
some boundary network of its IP version."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from prover.checks.structural import networks_within

# Networks under a few shared prefixes, so that nesting is common.
V4 = st.builds(
    lambda base, host, length: ipaddress.ip_network(
        ((base << 24 | host) >> (32 - length) << (32 - length), length)
    ),
    st.sampled_from([10, 172, 192]),
    st.integers(0, 2**24 - 1),
    st.integers(8, 32),
)
V6 = st.builds(
    lambda host, length: ipaddress.ip_network(
        ((0xFD << 120 | host) >> (128 - length) << (128 - length), length)
    ),
    st.integers(0, 2**16 - 1),
    st.integers(8, 128),
)
NETWORKS = st.lists(st.one_of(V4, V6), min_size=1, max_size=6).map(tuple)


@settings(max_examples=500, deadline=None)
@given(NETWORKS, NETWORKS)
def test_agrees_with_subnet_of(cand: tuple, bound: tuple) -> None:
    expected = all(any(c.version == b.version and c.subnet_of(b) for b in bound) for c in cand)
    assert networks_within(cand, bound) is expected


def test_a_network_inside_its_own_supernet_and_not_outside() -> None:
    net = ipaddress.ip_network
    assert networks_within((net("10.1.2.0/24"),), (net("10.0.0.0/8"), net("::/0")))
    assert not networks_within((net("10.1.2.0/24"),), (net("10.1.3.0/24"),))
    assert not networks_within((net("10.0.0.0/8"),), (net("10.1.0.0/16"),))
    assert not networks_within((net("fd00::/64"),), (net("0.0.0.0/0"),))
