"""The soundness campaign: generated policy pairs judged by the concrete evaluator
(reference-model pairs) and the runtime model (pairs beyond it).

The default run checks a fixed, deterministic slice (seed ``FAST_SEED``, ``FAST_PAIRS``
pairs, in two worker processes); the slow test runs a longer one, and
``benchmarks/soundness_campaign.py`` the long campaign (20,000 pairs and more). A failure
prints every finding with both policies and the (seed, index) that rebuilds the pair.
"""

from __future__ import annotations

import time
from functools import cache

import pytest

from tests.soundness.campaign import Options, Summary, run_campaign

FAST_SEED = 20_260_601
FAST_PAIRS = 300
SLOW_SEED = 7
SLOW_PAIRS = 3_000


def _summary(seed: int, pairs: int, options: Options, jobs: int = 1) -> Summary:
    summary = Summary()
    start = time.perf_counter()
    for result in run_campaign(seed, range(pairs), options, jobs=jobs):
        summary.add(result)
    summary.wall_seconds = time.perf_counter() - start
    return summary


@cache
def fast() -> Summary:
    return _summary(FAST_SEED, FAST_PAIRS, Options(relation_rate=0.5, tries=200), jobs=2)


def _findings(summary: Summary) -> str:
    return "\n".join(f"pair {i}: {f.render()}" for i, f in summary.failing)


def test_no_verdict_of_the_fast_slice_is_unsound_or_buggy() -> None:
    summary = fast()
    assert summary.pairs == FAST_PAIRS
    assert not summary.failing, _findings(summary)


def test_the_fast_slice_reaches_every_verdict_without_unsupported_dominating() -> None:
    verdicts = fast().verdicts
    for verdict in ("within_boundary", "exceeds_boundary", "unsupported"):
        assert verdicts[verdict] >= 0.1 * FAST_PAIRS, verdicts
    assert verdicts["inconclusive"] >= 1, verdicts
    assert verdicts["unsupported"] <= 0.4 * FAST_PAIRS, verdicts


def test_the_fast_slice_checks_many_concrete_facts_and_every_relation() -> None:
    summary = fast()
    assert summary.facts >= 20 * summary.verdicts["within_boundary"]
    relations = {relation for relation, _ in summary.relations}
    assert relations == {"self", "removal", "foreign"}


def test_the_action_sampler_would_refute_almost_every_false_within() -> None:
    """Reference pairs with the concrete evaluator's sampler, extended pairs with the
    runtime model's (whose opaque messages and selections make refutation harder)."""
    summary = fast()
    for power, least, share in ((summary.power, 15, 0.95), (summary.runtime_power, 30, 0.85)):
        assert power[True] + power[False] >= least, power
        assert power[True] >= share * (power[True] + power[False]), power


@pytest.mark.slow
def test_a_longer_campaign_finds_no_unsound_or_buggy_verdict() -> None:
    summary = _summary(SLOW_SEED, SLOW_PAIRS, Options(), jobs=2)
    print(summary.report(SLOW_SEED, summary.wall_seconds))
    assert not summary.failing, _findings(summary)
