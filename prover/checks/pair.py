"""The whole boundary check on two loaded policies: limits, then the reference pipeline
(:mod:`prover.checks.boundary`) or the default analysis (:mod:`prover.extended.check`,
which reads each policy as the runtime enforces it, :mod:`prover.runtime`).

It sits above both so that neither imports the other's caller: the reference pipeline
knows nothing of the extended analysis, which builds on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prover.checks.boundary import check_models, known_identity
from prover.policy.limits import resource_limit_reason
from prover.policy.normalize import normalize
from prover.policy.shape import shape_problem
from prover.results import CheckOutcome, ReasonCode
from prover.run.budget import Budget, BudgetExhausted

if TYPE_CHECKING:
    from prover.environment.evidence import Evidence
    from prover.policy.schema import AuthoredPolicy


def check_policies(
    candidate: AuthoredPolicy,
    boundary: AuthoredPolicy,
    budget: Budget,
    *,
    reference: bool = False,
    evidence: Evidence | None = None,
) -> CheckOutcome:
    """Run the whole check on two loaded policies under ``budget``.

    ``reference`` gives exactly the reference prover's verdicts and reasons; the default
    is the extended analysis (:mod:`prover.extended.check`), which decides soundly much
    of what the reference reports ``unsupported``. ``evidence`` (environment facts)
    decides what depends on the sandbox image; the facts used are recorded on it.
    """
    if budget.cancelled:
        return CheckOutcome.stopped(cancelled=True)
    limit = resource_limit_reason(candidate, boundary)
    if limit is not None:
        return CheckOutcome.inconclusive(ReasonCode.RESOURCE_LIMIT, limit)
    if budget.timeout_ms <= 0:
        return CheckOutcome.inconclusive(
            ReasonCode.SOLVER_TIMEOUT, "solver timeout must be positive"
        )
    try:
        if not reference:
            from prover.extended.check import check_extended

            return check_extended(candidate, boundary, budget, evidence)
        for label, policy in (("boundary", boundary), ("candidate", candidate)):
            problem = shape_problem(policy, known_identity=known_identity(evidence))
            if problem is not None:
                return CheckOutcome.unsupported(
                    ReasonCode.UNSUPPORTED_POLICY_SHAPE, f"{label} policy {problem}"
                )
        return check_models(normalize(candidate), normalize(boundary), budget, evidence)
    except BudgetExhausted as exc:
        return CheckOutcome.stopped(exc.cancelled)
