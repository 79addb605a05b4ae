"""The network domains for one identity mode: shortcut, probes, then Z3 (spec §9.8).

The structural shortcut works per candidate endpoint: when it covers them all the mode
is within; otherwise the probes and Z3 look only at what it could not cover (Z3 skips the
covered endpoints' slices but keeps their terms wherever another slice reads them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prover.checks.network_report import network_counterexample
from prover.checks.probes import probe_counterexample
from prover.checks.structural import structural_coverage
from prover.encode.overlap import EndpointRef
from prover.encode.session import SolverSession
from prover.policy.model import Policy
from prover.results import CheckOutcome, ReasonCode
from prover.run.budget import Budget

if TYPE_CHECKING:
    from prover.encode.solver import NetworkModeResult


def solve_network_mode(
    candidate: Policy,
    boundary: Policy,
    *,
    identity: bool,
    budget: Budget,
    skip: frozenset[EndpointRef],
    session: SolverSession | None = None,
) -> NetworkModeResult:
    """The Z3 stage, imported on first use: pairs that the shortcut or a probe decides
    never import Z3 (about 0.1 s of a cold start)."""
    from prover.encode.solver import solve_network_mode as solve

    return solve(candidate, boundary, identity=identity, budget=budget, skip=skip, session=session)


def check_network_mode(
    candidate: Policy,
    boundary: Policy,
    *,
    identity: bool,
    budget: Budget,
    session: SolverSession | None = None,
) -> CheckOutcome:
    """``within`` for this mode, an exceed with a replayed witness, or inconclusive.
    The solves of one ``session`` share one Z3 context (see :mod:`prover.encode.session`)."""
    coverage = structural_coverage(candidate, boundary, identity, budget.checkpoint, session)
    if coverage.complete:
        return CheckOutcome.within(decided_by="structural")
    action = probe_counterexample(candidate, boundary, identity, budget, coverage.covered)
    if action is not None:
        return CheckOutcome.exceeds(network_counterexample(action), decided_by="probe")
    result = solve_network_mode(
        candidate,
        boundary,
        identity=identity,
        budget=budget,
        skip=coverage.covered,
        session=session,
    )
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
