"""The network domains for one identity mode: shortcut, probes, then Z3 (spec §9.8)."""

from __future__ import annotations

from prover.budget import Budget
from prover.checks.probes import probe_counterexample
from prover.checks.structural import structurally_contained
from prover.model import Policy
from prover.network_solver import network_counterexample, solve_network_mode
from prover.results import CheckOutcome, ReasonCode


def check_network_mode(
    candidate: Policy, boundary: Policy, *, identity: bool, budget: Budget
) -> CheckOutcome:
    """``within`` for this mode, an exceed with a replayed witness, or inconclusive."""
    if structurally_contained(candidate, boundary, identity):
        return CheckOutcome.within(decided_by="structural")
    action = probe_counterexample(candidate, boundary, identity, budget)
    if action is not None:
        return CheckOutcome.exceeds(network_counterexample(action), decided_by="probe")
    result = solve_network_mode(candidate, boundary, identity=identity, budget=budget)
    if result.status == "within":
        return CheckOutcome.within(decided_by=result.decided_by)
    if result.status == "exceeds" and result.witness is not None:
        return CheckOutcome.exceeds(
            network_counterexample(result.witness), decided_by=result.decided_by
        )
    return CheckOutcome.inconclusive(
        result.reason_code or ReasonCode.SOLVER_UNKNOWN,
        result.reason or "Z3 returned unknown",
    )
