"""The library entry point: reading the policies is bounded by the check's deadline."""

from __future__ import annotations

import time

from prover.api import check_boundary
from prover.budget import Budget
from prover.results import ReasonCode, Verdict


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
