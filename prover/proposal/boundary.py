"""Beyond the reference: boundary checks of a proposal's merged policy.

The reference risk check answers "which tracked risks does the rule add?". Two questions
it cannot answer are settled here by the boundary prover, with the merged policy (the
candidate the gateway would apply) as the candidate:

* ``boundary`` (only when the caller gives a boundary policy): is the merged policy
  within that boundary? A proposal with no new findings can still exceed the boundary
  (e.g. a plain new host) and one with findings can be within it, so both verdicts are
  reported and neither implies the other.
* ``adds_access``: is the merged policy within the *current* policy? If so the proposal
  is redundant: it adds no access at all (see :func:`adds_access_of`).

Both checks share one :class:`~prover.run.budget.Budget`, so a caller's time limit and
cancellation cover the whole assessment. The caller's boundary runs first: its verdict
decides the exit status, while ``adds_access`` is advisory.

Exit status (:func:`prover.proposal.exit_code`): when a boundary is given and its result
is anything but ``within_boundary``, the proposal needs review (``needs_review`` is set,
exit 1), unless the proposal could not be applied (exit 2). ``auto_approvable`` keeps the
reference gateway's meaning and ignores the boundary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from prover.environment import Environment
from prover.proposal.assessment import ProposalAssessment
from prover.results import CheckOutcome, Counterexample, Verdict
from prover.results.report import boundary_report, counterexample_line
from prover.results.text import escape_control
from prover.run.budget import Budget

if TYPE_CHECKING:
    from prover.api import BoundaryCheck

#: ``inputs`` of the boundary result: what was compared with what.
BOUNDARY_INPUTS = {"candidate": "merged_policy", "boundary": "boundary"}


def _timed_check(
    candidate: str, boundary: str | bytes, budget: Budget, environment: Environment | None
) -> BoundaryCheck:
    """``check_boundary`` on the shared budget; the receipt gets this check's own time."""
    # Imported here: importing the proposal check must not load Z3 until a check runs.
    from prover.api import BoundaryCheck, check_boundary

    started = budget.elapsed_ms()
    check = check_boundary(candidate, boundary, budget=budget, environment=environment)
    own = round(max(0.0, budget.elapsed_ms() - started), 3)
    return BoundaryCheck(check.outcome, check.receipt.model_copy(update={"elapsed_ms": own}))


def adds_access_of(outcome: CheckOutcome) -> bool | None:
    """Whether the merged policy allows more than the current one, from that check's outcome.

    ``False`` only on ``within_boundary``: a proof that every action the merged policy
    allows, the current policy already allows (in the prover's model: its coverage
    domains, with the runtime's always-blocked addresses). ``True`` only on
    ``exceeds_boundary``: a concrete action witnesses the new access. Every other
    outcome (``unsupported``, ``inconclusive``, ``error``) is ``None``: the prover could
    not decide, and neither answer may be guessed. Saying ``False`` would tell an agent
    that the proposal is harmless when nothing proved it; saying ``True`` would claim an
    added access that no witness shows, and would hide that the question went unanswered.
    """
    if outcome.verdict is Verdict.WITHIN:
        return False
    if outcome.verdict is Verdict.EXCEEDS:
        return True
    return None


def _undecided_warning(outcome: CheckOutcome) -> str:
    code = f" ({outcome.reason_code.value})" if outcome.reason_code else ""
    reason = f": {outcome.reason}" if outcome.reason else ""
    return (
        "adds_access is unknown: checking the merged policy within the current policy gave "
        f"{outcome.verdict.value}{code}{reason}"
    )


def with_boundary_verdicts(
    assessment: ProposalAssessment,
    current: str | bytes,
    boundary: str | bytes | None,
    budget: Budget,
    environment: Environment | None = None,
) -> ProposalAssessment:
    """The assessment with ``adds_access`` and ``boundary`` decided.

    When the proposal could not be applied there is no merged policy, so nothing is
    checked: both stay ``None`` (the exit status is 2 anyway).
    """
    merged = assessment.merged_policy
    if merged is None:
        return assessment
    update: dict[str, Any] = {}
    if boundary is not None:
        check = _timed_check(merged, boundary, budget, environment)
        update["boundary"] = boundary_report(
            check.outcome, inputs=BOUNDARY_INPUTS, receipt=check.receipt
        )
        if check.outcome.verdict is not Verdict.WITHIN:
            update["needs_review"] = True
    redundancy_check = _timed_check(merged, current, budget, environment)
    redundancy = redundancy_check.outcome
    update["adds_access"] = adds_access_of(redundancy)
    if environment is not None:
        update["receipt"] = assessment.receipt.model_copy(
            update={"assumptions": redundancy_check.receipt.assumptions}
        )
    if update["adds_access"] is None:
        update["warnings"] = [*assessment.warnings, _undecided_warning(redundancy)]
    return assessment.model_copy(update=update)


def boundary_failed(assessment: ProposalAssessment) -> bool:
    """A boundary was checked and the result is not ``within_boundary``."""
    document = assessment.boundary
    return document is not None and document.get("result") != Verdict.WITHIN.value


def boundary_exceeded(assessment: ProposalAssessment) -> str | None:
    """Why the proposal is blocked when the merged policy is proved to exceed the
    boundary (an approval blocker), else None."""
    document = assessment.boundary
    if document is None or document.get("result") != Verdict.EXCEEDS.value:
        return None
    if document.get("counterexample") is None:
        return "the merged policy exceeds the boundary"
    cex = _COUNTEREXAMPLE.validate_python(document["counterexample"])
    return f"the merged policy exceeds the boundary: {escape_control(counterexample_line(cex))}"


_ADDS_ACCESS_TEXT = {
    True: "yes — the merged policy allows access the current policy does not",
    False: "no — the merged policy is proven within the current policy (redundant proposal)",
    None: "unknown — not decided by the boundary prover (see warnings)",
}

_COUNTEREXAMPLE: TypeAdapter[Any] = TypeAdapter(Counterexample)


def boundary_lines(assessment: ProposalAssessment) -> list[str]:
    """The text block of both verdicts (empty when the proposal was not applied)."""
    if assessment.merged_policy is None:
        return []
    lines = [f"Adds access:  {_ADDS_ACCESS_TEXT[assessment.adds_access]}"]
    document = assessment.boundary
    if document is not None:
        result = document.get("result")
        verdict = "PASS" if result == Verdict.WITHIN.value else "FAIL"
        lines.append(f"Boundary:     {result} ({verdict}: merged policy against the boundary)")
        if document.get("counterexample") is not None:
            cex = _COUNTEREXAMPLE.validate_python(document["counterexample"])
            lines.append(f"  counterexample: {escape_control(counterexample_line(cex))}")
        if document.get("reason") is not None and result != Verdict.EXCEEDS.value:
            lines.append(f"  reason: {escape_control(str(document['reason']))}")
        for fact in (document.get("receipt") or {}).get("assumptions") or ():
            lines.append(f"  assumption: {escape_control(str(fact))}")
    for fact in assessment.receipt.assumptions or ():
        lines.append(f"Assumption (adds_access): {escape_control(str(fact))}")
    return [*lines, ""]
