"""The per-endpoint shortcut against Z3 on the soundness campaign's policy pairs.

For each pair and identity mode, Z3 asks exactly the slices the shortcut skips: they
must all be within. And probing or solving with the covered endpoints skipped must give
the verdict the unskipped solver gives.
"""

from __future__ import annotations

import pytest

from prover.checks.probes import probe_counterexample
from prover.checks.structural import structural_coverage
from prover.concrete import network_allows
from prover.encode.solver import solve_network_mode
from prover.policy.loader import load_policy
from prover.policy.model import Policy
from prover.policy.normalize import normalize
from prover.policy.shape import shape_problem
from prover.run.budget import Budget
from tests.soundness.pairs import policy_pair

SEED = 20261202
PAIRS = 100


def _models(index: int) -> tuple[Policy, Policy] | None:
    pair = policy_pair(SEED, index)
    try:
        cand, bound = load_policy(pair.candidate), load_policy(pair.boundary)
    except Exception:  # invalid input families: nothing to check here
        return None
    if shape_problem(cand) is not None or shape_problem(bound) is not None:
        return None
    return normalize(cand), normalize(bound)


def _refs(p: Policy) -> frozenset[tuple[int, int]]:
    return frozenset((ri, ei) for ri, r in enumerate(p.rules) for ei in range(len(r.endpoints)))


@pytest.mark.parametrize("index", range(PAIRS))
def test_skipped_slices_are_within_and_skipping_keeps_the_verdict(index: int) -> None:
    models = _models(index)
    if models is None:
        return
    cand, bound = models
    for identity in (False, True):
        covered = structural_coverage(cand, bound, identity).covered
        if covered:
            only_covered = solve_network_mode(
                cand, bound, identity=identity, budget=Budget(60_000), skip=_refs(cand) - covered
            )
            assert only_covered.status == "within", (index, identity, only_covered)
        full = solve_network_mode(cand, bound, identity=identity, budget=Budget(60_000))
        skipped = solve_network_mode(
            cand, bound, identity=identity, budget=Budget(60_000), skip=covered
        )
        assert skipped.status == full.status, (index, identity)
        probe = probe_counterexample(cand, bound, identity, Budget(60_000), covered)
        if probe is not None:
            assert full.status == "exceeds", (index, identity)
            assert network_allows(cand, probe) and not network_allows(bound, probe)


def test_the_campaign_pairs_exercise_the_shortcut() -> None:
    """Guards the test above against a generator that never covers anything."""
    partly = 0
    for index in range(PAIRS):
        models = _models(index)
        if models is None:
            continue
        coverage = structural_coverage(*models, True)
        partly += 0 < len(coverage.covered) < coverage.total
    assert partly >= 5
