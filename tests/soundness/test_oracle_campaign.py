"""The oracle campaign in the suite: a small seeded run judged by the independent oracle
(``tests/soundness/sandbox_oracle``, written from OpenShell's source, importing nothing
from ``prover``): no unsound pass and no false exceed."""

from __future__ import annotations

import pytest

from tests.soundness.oracle_campaign import Summary, pair_inputs, run_pair

SEED = 20_261_204
PAIRS = 80


@pytest.fixture(scope="module")
def summary() -> Summary:
    result = Summary()
    for index in range(PAIRS):
        result.add(run_pair(SEED, index))
    return result


def test_no_unsound_pass_and_no_false_exceed(summary: Summary) -> None:
    assert (summary.unsound, summary.false_exceeds) == (0, 0), summary.report(SEED)


def test_the_campaign_exercises_every_verdict_and_models_the_pairs(summary: Summary) -> None:
    assert summary.verdicts["within_boundary"] >= PAIRS // 4, summary.report(SEED)
    assert summary.verdicts["exceeds_boundary"] >= PAIRS // 8, summary.report(SEED)
    assert sum(summary.skipped.values()) <= PAIRS // 10, summary.report(SEED)


def test_pairs_are_rebuilt_from_seed_and_index() -> None:
    assert pair_inputs(SEED, 3) == pair_inputs(SEED, 3)
    assert pair_inputs(SEED, 3) != pair_inputs(SEED, 4)


def test_representatives_lose_no_network_excess(monkeypatch: pytest.MonkeyPatch) -> None:
    # The judge tries one executable (and one host/port) per class that no rule tells
    # apart; trying every one finds the same network excesses.
    from tests.soundness.sandbox_oracle import actions
    from tests.soundness.sandbox_oracle.judge import _network_excess
    from tests.soundness.sandbox_oracle.sandbox import World, build_sandbox

    outcomes = []
    # pairs with network rules on both sides at SEED, some with a network excess
    for index in (9, 11, 17, 20, 57, 67, 85, 110, 118, 145):
        candidate, boundary, image = pair_inputs(SEED, index)
        for world in (World(True, True), World(True, False)):
            cand, bound = (
                build_sandbox(candidate, image, world),
                build_sandbox(boundary, image, world),
            )
            if not (cand.runs and bound.runs):
                continue
            pruned = _network_excess(image, cand, bound, world)
            with monkeypatch.context() as m:
                m.setattr(actions, "_signature", lambda items, key: list(items))
                full = _network_excess(image, cand, bound, world)
            assert (pruned is None) == (full is None), (index, world, full)
            outcomes.append(pruned is not None)
    assert any(outcomes) and not all(outcomes), outcomes
