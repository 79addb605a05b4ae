"""Differential tests of the network solver against the concrete evaluator.

Random small policy pairs over the modelled grammar (hosts and wildcards, ports, CIDRs,
gateway aliases, binaries, layers, methods, paths, query matchers, denies):

* every ``within`` is checked on concrete actions sampled from the candidate's own
  endpoints with edge values: what the candidate allows, the boundary allows;
* every ``exceeds`` witness replays (candidate allows, boundary refuses);
* a policy is within itself, and within itself plus anything;
* removing a deny-free rule keeps a policy within the original;
* the sliced solver and the monolithic query agree.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prover.concrete.network import network_allows
from prover.encode.solver import NetworkModeResult, solve_network_mode, witness_is_canonical
from prover.policy.model import Policy
from prover.results import ReasonCode
from prover.run.budget import Budget
from tests.prover.encode.samples import candidate_actions
from tests.prover.encode.strategies import policies, rules

SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


def solve(
    candidate: Policy, boundary: Policy, identity: bool, slicing: bool = True
) -> NetworkModeResult:
    return solve_network_mode(
        candidate, boundary, identity=identity, budget=Budget(20_000), slicing=slicing
    )


def assert_sound(candidate: Policy, boundary: Policy, identity: bool) -> NetworkModeResult:
    result = solve(candidate, boundary, identity)
    if result.status == "within":
        for action in candidate_actions(candidate, identity):
            if network_allows(candidate, action):
                assert network_allows(boundary, action), action
    elif result.status == "exceeds":
        witness = result.witness
        assert witness is not None and witness_is_canonical(witness)
        assert network_allows(candidate, witness) and not network_allows(boundary, witness)
    else:
        # Only honest give-ups are acceptable on these tiny inputs.
        assert result.reason_code is ReasonCode.INVALID_WITNESS, result
    return result


@st.composite
def pairs(draw: st.DrawFn) -> tuple[Policy, Policy]:
    """Independent pairs, and pairs where the boundary extends the candidate."""
    candidate = draw(policies())
    kind = draw(st.sampled_from(("independent", "extended", "extended")))
    if kind == "independent":
        return candidate, draw(policies())
    extra = draw(st.lists(rules("extra"), max_size=2))
    extra = [replace(r, key=f"extra{i}") for i, r in enumerate(extra)]
    return candidate, replace(candidate, rules=(*candidate.rules, *extra))


@settings(max_examples=150, **SETTINGS)
@given(pair=pairs(), identity=st.booleans())
def test_within_holds_on_sampled_actions_and_exceeds_witnesses_replay(
    pair: tuple[Policy, Policy], identity: bool
) -> None:
    assert_sound(*pair, identity)


@settings(max_examples=40, **SETTINGS)
@given(p=policies(max_rules=3), identity=st.booleans())
def test_a_policy_is_within_itself(p: Policy, identity: bool) -> None:
    assert solve(p, p, identity).status == "within"


@settings(max_examples=40, **SETTINGS)
@given(p=policies(max_rules=3), identity=st.booleans(), data=st.data())
def test_removing_a_deny_free_rule_stays_within(
    p: Policy, identity: bool, data: st.DataObject
) -> None:
    removable = [i for i, r in enumerate(p.rules) if not any(e.deny_rules for e in r.endpoints)]
    if not removable:
        return
    index = data.draw(st.sampled_from(removable))
    smaller = replace(p, rules=p.rules[:index] + p.rules[index + 1 :])
    assert solve(smaller, p, identity).status == "within"


@settings(max_examples=40, **SETTINGS)
@given(pair=pairs(), identity=st.booleans())
def test_sliced_and_monolithic_solvers_agree(pair: tuple[Policy, Policy], identity: bool) -> None:
    assert_agree(solve(*pair, identity, slicing=True), solve(*pair, identity, slicing=False))


def assert_agree(sliced: NetworkModeResult, whole: NetworkModeResult) -> None:
    """Both within, or both not; two decided answers are the same answer."""
    assert (sliced.status == "within") is (whole.status == "within"), (sliced, whole)
    if "inconclusive" not in (sliced.status, whole.status):
        assert sliced.status == whole.status


@pytest.mark.slow
@settings(max_examples=1500, **SETTINGS)
@given(pair=pairs(), identity=st.booleans())
def test_soundness_campaign(pair: tuple[Policy, Policy], identity: bool) -> None:
    result = assert_sound(*pair, identity)
    assert_agree(result, solve(*pair, identity, slicing=False))
