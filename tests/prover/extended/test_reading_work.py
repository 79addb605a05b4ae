"""The extended reading's overlap scan: how much work it does, and that the caller's
deadline stops it (counted, not timed)."""

from __future__ import annotations

import pytest

from prover.extended import hosts
from prover.extended.reading import CHECKPOINT_EVERY_PAIRS, read_policy
from prover.policy.loader import load_policy
from prover.run.budget import BudgetExhausted


def _policy(hosts_: list[str]) -> str:
    rules = "".join(
        f"  r{i}:\n    endpoints: [{{host: '{host}', port: 443}}]\n"
        "    binaries: [{path: /usr/bin/curl}]\n"
        for i, host in enumerate(hosts_)
    )
    return "version: 1\nnetwork_policies:\n" + rules


def test_distinct_exact_hosts_on_one_port_are_not_compared_pairwise() -> None:
    """Found by an agent: 3,000 exact hosts on port 443 took minutes (every pair went
    through the host-intersection search). Exact hosts meet only when equal."""
    hosts.hosts_intersect.cache_clear()
    policy = load_policy(_policy([f"h{i}.example.com" for i in range(1000)]))
    calls: list[int] = []
    read_policy(policy, checkpoint=lambda: calls.append(1))
    assert hosts.hosts_intersect.cache_info().misses == 0
    assert calls == []  # not even CHECKPOINT_EVERY_PAIRS pairs were compared


def test_a_wildcard_is_compared_with_every_other_endpoint_on_its_port() -> None:
    exact = [f"h{i}.example.com" for i in range(300)]
    policy = load_policy(_policy(["*.example.com", *exact]))
    calls: list[int] = []
    reading = read_policy(policy, checkpoint=lambda: calls.append(1))
    assert len(calls) == 300 // CHECKPOINT_EVERY_PAIRS
    # and the overlaps were found: the wildcard meets each exact host
    assert hosts.hosts_intersect("*.example.com", "h1.example.com")
    assert reading.upper.rules


def test_the_callers_deadline_stops_a_long_scan() -> None:
    policy = load_policy(_policy([f"*.svc{i}.example.com" for i in range(600)]))
    seen: list[int] = []

    def checkpoint() -> None:
        seen.append(1)
        if len(seen) == 3:
            raise BudgetExhausted(cancelled=False)

    with pytest.raises(BudgetExhausted):
        read_policy(policy, checkpoint=checkpoint)
    assert len(seen) == 3


def test_wildcards_whose_literal_ends_differ_do_not_meet() -> None:
    hosts.hosts_intersect.cache_clear()
    assert not hosts.hosts_intersect("*.svc1.example.com", "*.svc2.example.com")
    assert not hosts.hosts_intersect("api*.example.com", "web*.example.com")
    assert hosts.hosts_intersect("*.svc1.example.com", "**.example.com")
