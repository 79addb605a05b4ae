"""The library entry point: reading the policies is bounded by the check's deadline."""

from __future__ import annotations

import time

from prover.api import check_boundary
from prover.results import ReasonCode, Verdict
from prover.run.budget import Budget


def _large_policy(rules: int) -> str:
    body = "".join(
        f"  r{i}:\n    endpoints:\n      - {{host: h{i}.example.com, port: 443}}\n"
        f"    binaries:\n      - {{path: /usr/bin/b{i}}}\n"
        for i in range(rules)
    )
    return "version: 1\nnetwork_policies:\n" + body


def test_a_deadline_shorter_than_reading_the_policies_stops_the_read() -> None:
    text = _large_policy(7_000)  # about 70,000 YAML nodes: hundreds of ms to read twice
    started = time.monotonic()
    outcome = check_boundary(text, text, timeout_ms=20).outcome
    elapsed = time.monotonic() - started
    assert outcome.verdict is Verdict.INCONCLUSIVE
    assert outcome.reason_code is ReasonCode.SOLVER_TIMEOUT
    assert elapsed < 0.4  # reading both in full takes 0.6 s or more here


def test_a_check_cancelled_before_it_starts_stops_reading_and_says_cancelled() -> None:
    budget = Budget(10_000)
    budget.cancel()
    outcome = check_boundary(_large_policy(2_000), "version: 1\n", budget=budget).outcome
    assert outcome.verdict is Verdict.INCONCLUSIVE
    assert outcome.reason_code is ReasonCode.CANCELLED


def test_both_invalid_policies_are_reported_in_one_error() -> None:
    """All problems in one call: the boundary is read even when the candidate fails."""
    candidate = "version: 1\nbogus: 1\n"
    boundary = "version: 1\nnetwork_policies: {x: {endpoints: [{host: a, port: 99999}]}}\n"
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.ERROR
    reason = outcome.reason or ""
    assert "invalid candidate policy" in reason and "unknown field 'bogus'" in reason
    assert "invalid boundary policy" in reason and "endpoints[0].port" in reason
    # The reference stops at the candidate.
    reference = check_boundary(candidate, boundary, reference_semantics=True).outcome
    assert "invalid boundary policy" not in (reference.reason or "")


def test_every_shape_blocker_is_listed_in_one_unsupported_reason() -> None:
    """Found by an agent: three mistakes in one rule came back one call at a time."""
    candidate = (
        "version: 1\nnetwork_policies:\n  gh:\n    binaries: [{path: usr/bin/curl}]\n"
        "    endpoints:\n      - {host: api.github.com, port: 443, allowed_ips: [nope]}\n"
        "  pip:\n    binaries: [{path: /usr/bin/pip}]\n"
        "    endpoints: [{host: '10.0.*.*', port: 443}]\n"
    )
    boundary = "version: 1\n"
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.UNSUPPORTED
    reason = outcome.reason or ""
    assert "rule 'gh' uses an unsupported binary ('usr/bin/curl' at binaries[0])" in reason
    assert "rule 'gh' has invalid allowed_ips entry 'nope' (endpoint 0)" in reason
    assert "rule 'pip' uses an IP-literal wildcard" in reason
    # The reference gives its first reason only.
    reference = check_boundary(candidate, boundary, reference_semantics=True).outcome
    assert reference.reason == "candidate policy rule 'gh' uses an unsupported binary"
