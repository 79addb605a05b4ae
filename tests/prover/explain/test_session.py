"""One deadline and one cancellation for every check an explanation runs."""

from __future__ import annotations

import threading

import pytest

from prover.explain import explain
from prover.explain.session import StepBudget
from prover.run.budget import Budget, BudgetExhausted
from tests.prover.explain.pairs import BOUNDARY, THREE_VIOLATIONS


class _Context:
    def __init__(self) -> None:
        self.interrupts = 0

    def interrupt(self) -> None:
        self.interrupts += 1


def test_cancelling_the_parent_cancels_the_step_and_interrupts_its_solver() -> None:
    parent = Budget(10_000)
    step = StepBudget(parent, 5_000)
    ctx = _Context()

    with step.solver_context(ctx):
        parent.cancel()
        assert step.cancelled
        with pytest.raises(BudgetExhausted) as raised:
            step.checkpoint()
    assert raised.value.cancelled
    assert ctx.interrupts == 1


def test_a_step_ends_at_its_own_deadline_before_the_parents() -> None:
    parent = Budget(10_000)
    step = StepBudget(parent, 0)

    with pytest.raises(BudgetExhausted) as raised:
        step.checkpoint()
    assert not raised.value.cancelled
    assert not parent.expired


def test_a_cancelled_explanation_is_inconclusive_and_offers_nothing() -> None:
    budget = Budget(10_000)
    budget.cancel()

    explanation = explain(THREE_VIOLATIONS, BOUNDARY, budget=budget)

    assert explanation.result.result == "inconclusive"
    assert explanation.result.reason_code == "cancelled"
    assert explanation.result.exit_code == 130
    assert not explanation.fix_verified and explanation.fixed_candidate is None


def test_cancelling_during_the_rounds_never_yields_an_unverified_fix() -> None:
    budget = Budget(10_000)
    timer = threading.Timer(0.02, budget.cancel)
    timer.start()
    try:
        explanation = explain(THREE_VIOLATIONS, BOUNDARY, budget=budget)
    finally:
        timer.cancel()

    if explanation.fix_verified:  # it finished before the cancellation
        assert explanation.verification is not None
        assert explanation.verification.narrows_candidate.result == "within_boundary"
    else:
        assert explanation.fixed_candidate is None and not explanation.fix


def test_max_violations_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_violations"):
        explain(THREE_VIOLATIONS, BOUNDARY, max_violations=0)
