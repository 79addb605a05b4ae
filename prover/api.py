"""The public synchronous entry points over policy text.

``check_boundary`` never raises for bad input or internal failure: it returns an
``error`` outcome for input that cannot be read and an ``inconclusive`` one for anything
that went wrong inside, so no failure can ever read as ``within_boundary``.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

import z3

from prover.budget import DEFAULT_TIMEOUT_MS, Budget
from prover.errors import PolicyLoadError
from prover.results import CheckOutcome, ReasonCode, Receipt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BoundaryCheck:
    """An outcome with the receipt that binds it to its inputs."""

    outcome: CheckOutcome
    receipt: Receipt


def sha256_hex(text: str | bytes) -> str:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def check_boundary(
    candidate: str | bytes,
    boundary: str | bytes,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    budget: Budget | None = None,
) -> BoundaryCheck:
    """Prove that ``candidate`` allows nothing beyond ``boundary`` (policy texts).

    Pass a ``budget`` to cancel the check from another thread; otherwise one is made
    from ``timeout_ms``.
    """
    from prover.checks.boundary import check_policies
    from prover.policy.loader import load_policy

    budget = budget or Budget(timeout_ms)
    outcome: CheckOutcome
    try:
        try:
            cand = load_policy(candidate)
        except PolicyLoadError as exc:
            outcome = CheckOutcome.error(f"invalid candidate policy: invalid policy: {exc}")
        else:
            try:
                bound = load_policy(boundary)
            except PolicyLoadError as exc:
                outcome = CheckOutcome.error(f"invalid boundary policy: invalid policy: {exc}")
            else:
                outcome = check_policies(cand, bound, budget)
    except Exception as exc:  # soundness: an internal failure is never a pass
        log.exception("internal error during boundary check")
        outcome = CheckOutcome.inconclusive(
            ReasonCode.SOLVER_UNKNOWN,
            f"internal error during the check: {type(exc).__name__}: {exc}",
        )
    receipt = Receipt(
        candidate_sha256=sha256_hex(candidate),
        boundary_sha256=sha256_hex(boundary),
        z3_version=z3.get_version_string(),
        elapsed_ms=round(budget.elapsed_ms(), 3),
        decided_by=outcome.decided_by,
    )
    return BoundaryCheck(outcome=outcome, receipt=receipt)
